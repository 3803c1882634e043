import type { Clock } from '../../shared/clock.ts';
import type { StoreContract } from '../store/contract.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { EventBus } from '../console-api/events.ts';
import type { TeamConfig } from '../config/team-config.ts';
import type { ConsoleEvent, ConversationLabel, Operator, Presence, TeamMember } from '../../shared/console-api.ts';
import { createPresence } from './presence.ts';
import { presentest, type RemotePresence } from './remote-presence.ts';
import { createActivity } from './activity.ts';
import { createAutoAssign } from './auto-assign.ts';
import { clip } from '../console-api/alerts.ts';
import { TEST_VISITOR } from '../console-api/test-message.ts';

type AlertReason = Extract<ConsoleEvent, { type: 'alert' }>['reason'];

/** How often the queue and the offline agents are looked at again, whatever happened meanwhile. */
export const TEAM_SWEEP_MS = 30_000;

/** What the team workflow reads: accounts, the conversations' assignees and queue, and what an alert quotes. */
export type TeamStore = Pick<StoreContract, 'accounts' | 'conversations' | 'workspace' | 'team'>;

export interface TeamDeps {
  store: TeamStore;
  writer: MessageWriter;
  clock: Clock;
  events: EventBus;
  config: TeamConfig;
  /** The console alert for a conversation that newly needs a human (alerts.ts), to these accounts or to every console. */
  raise: (conversationId: string, reason: AlertReason, recipients?: string[]) => Promise<void>;
  log: (line: string) => void;
  /** Several nodes (PostgreSQL): who is online on the others; an agent is as present as their best console anywhere. */
  remote?: RemotePresence;
}

/**
 * The team workflow's live side (protocol v1.2): presence, who views and types where, who gets a
 * conversation that needs a human and who hears of it, and the return of an offline agent's
 * conversations to the queue. Only in team mode (an enabled account besides the owner): one
 * person on one desktop gets their alerts as before, and nothing is assigned.
 */
export function createTeam(deps: TeamDeps) {
  const { store, writer, clock, events } = deps;
  const returnAfterMs = deps.config.returnAfterOfflineMinutes * 60_000;
  const returnTimers = new Map<string, () => void>();
  /** Who unassigned themselves from what: auto-assignment does not hand it straight back. */
  const declined = new Map<string, Set<string>>();
  const work = new Set<Promise<unknown>>();
  let sweepTimer: (() => void) | null = null;
  let stopped = false;

  const track = <T>(p: Promise<T>): Promise<T> => {
    const done = p.catch((error: unknown) => deps.log(`team: ${(error as Error).message}`)).finally(() => work.delete(done));
    work.add(done);
    return p;
  };

  // Read from the database each time, never kept: on several nodes an account changed on another
  // node (or by the CLI) counts here at the next look.
  const accounts = async () => (await store.accounts.list()).filter((a) => !a.disabled);
  const teamMode = async (): Promise<boolean> => (await accounts()).some((a) => !a.owner);
  const autoAssignOn = async (): Promise<boolean> => deps.config.autoAssign && (await teamMode());

  const presence = createPresence({
    clock,
    onChange(agentId, now) {
      events.emit({ type: 'presence', agentId, presence: now });
      if (now === 'offline') {
        activity.clear(agentId);
        scheduleReturn(agentId);
      } else if (now === 'online') void track(autoAssign.pass());
    },
  });
  const presenceOf = (agentId: string): Presence => {
    const here = presence.presenceOf(agentId);
    if (!deps.remote) return here;
    const there = deps.remote.presenceOf(agentId);
    // A console that left this node (its 90 s grace) and is open on another one now is as that one
    // says: set away there, the agent is away, not online by this node's stale grace.
    if (there !== 'offline' && presence.lingering(agentId)) return there;
    return presentest(here, there);
  };
  const offlineSince = (agentId: string): number => Math.max(presence.offlineSince(agentId), deps.remote?.lastHeard(agentId) ?? Number.NEGATIVE_INFINITY);
  const activity = createActivity({ clock, onChange: (conversationId, a) => events.emit({ type: 'activity', conversationId, ...a }) });

  async function labelOf(conversationId: string): Promise<{ said: string | null; who?: ConversationLabel }> {
    const conv = await store.conversations.byId(conversationId);
    const last = await store.workspace.lastCustomerText(conversationId);
    const who = conv ? { peer: conv.peer, groupId: conv.groupId, groupName: conv.groupName, customerId: conv.customerId, customerName: conv.customerName } : undefined;
    return { said: last ? clip(last.text, 200) : null, ...(who ? { who } : {}) };
  }

  /** Tells `assignee` a conversation is theirs now (not when they took it themselves). */
  async function announceAssigned(conversationId: string, assignee: string, by: Operator | null): Promise<void> {
    // The operator as named, never the address their call came from (that stays in the audit).
    events.emit({ type: 'assigned', conversationId, assignee, by: by && { id: by.id, name: by.name }, ...(await labelOf(conversationId)), recipients: [assignee] });
  }

  const autoAssign = createAutoAssign({
    team: store.team,
    writer,
    clock,
    enabled: autoAssignOn,
    candidates: async () =>
      (await accounts())
        .filter((a) => a.capacity > 0 && presenceOf(a.id) === 'online')
        .map((a) => ({ id: a.id, capacity: a.capacity })),
    declined: (conversationId) => declined.get(conversationId),
    async onClaim(conversationId, agentId) {
      declined.delete(conversationId);
      events.emit({ type: 'conversation', conversationId });
      await announceAssigned(conversationId, agentId, null);
    },
    log: deps.log,
  });

  /** Who hears of a conversation new in the queue: admins, and agents with nothing that needs them. */
  async function queueRecipients(except: string | null): Promise<string[]> {
    const open = await store.team.openCounts();
    return (await accounts())
      .filter((a) => a.id !== except && (a.role === 'admin' || (open.get(a.id) ?? 0) === 0))
      .map((a) => a.id);
  }

  /**
   * A conversation newly needs a human. Team mode: its assignee hears of it; one in the queue goes
   * to an online agent with room if auto-assignment can place it (they hear of it as assigned to
   * them), else to the queue's watchers. A one-person desktop: every console, as before.
   */
  async function needsHuman(conversationId: string, reason: AlertReason, except: string | null = null): Promise<void> {
    const conv = await store.conversations.byId(conversationId);
    const test = conv?.channel === 'web' && conv.customerId === TEST_VISITOR;
    if (!conv || test || !(await teamMode())) return deps.raise(conversationId, reason);
    if (conv.assignee) return deps.raise(conversationId, reason, [conv.assignee]);
    if (await autoAssignOn()) await autoAssign.pass();
    if (await store.team.assigneeOf(conversationId)) return;
    await deps.raise(conversationId, reason, await queueRecipients(except));
  }

  function scheduleReturn(agentId: string): void {
    returnTimers.get(agentId)?.();
    const at = offlineSince(agentId) + returnAfterMs;
    returnTimers.set(agentId, clock.after(at - clock.now(), () => void track(returnIfOffline(agentId))));
  }

  /** An agent offline long enough: their conversations that still need a human go back to the queue (and on to whoever can take them). */
  async function returnIfOffline(agentId: string): Promise<void> {
    returnTimers.delete(agentId);
    if (stopped || presenceOf(agentId) !== 'offline' || !(await teamMode())) return;
    if (clock.now() < offlineSince(agentId) + returnAfterMs) return scheduleReturn(agentId);
    await returnNow(agentId, 'offline agent, back to the queue', `has been offline ${deps.config.returnAfterOfflineMinutes} min`);
  }

  /** The agent's conversations that still need a human go back to the queue now, and on to whoever has room. */
  async function returnNow(agentId: string, why: string, logged: string): Promise<void> {
    const result = await writer.submit({ kind: 'return_to_queue', agentId, why, now: clock.now() });
    if (result?.kind !== 'returned' || result.ids.length === 0) return;
    deps.log(`team: ${agentId} ${logged}: ${result.ids.length} conversation(s) back in the queue`);
    for (const id of result.ids) events.emit({ type: 'conversation', conversationId: id });
    for (const id of result.ids) await needsHuman(id, 'needs_human');
  }

  /** Offline agents' conversations back, then the queue to whoever has room: what a missed event would have done. */
  async function sweep(): Promise<void> {
    if (!(await teamMode())) return;
    // A disabled agent (the CLI's disable is another process's) keeps nothing: at once, not after the offline wait.
    const disabled = new Set((await store.accounts.list()).flatMap((a) => (a.disabled ? [a.id] : [])));
    for (const agentId of await store.team.withOpen()) {
      if (disabled.has(agentId)) await returnNow(agentId, 'agent disabled, back to the queue', 'was disabled');
      else if (presenceOf(agentId) === 'offline') await returnIfOffline(agentId);
    }
    await autoAssign.pass();
  }

  function armSweep(): void {
    if (stopped) return;
    sweepTimer = clock.after(TEAM_SWEEP_MS, () => {
      void track(sweep());
      armSweep();
    });
  }

  return {
    teamMode,
    autoAssignOn,
    needsHuman: (conversationId: string, reason: AlertReason): void => void track(needsHuman(conversationId, reason)),
    /** Something freed a slot or changed the queue (a reply, a resolve, a flag, an assignment): look again. */
    changed: (): void =>
      void track(
        (async () => {
          if (await teamMode()) await autoAssign.pass();
        })(),
      ),
    /** Assigned by hand: the new assignee hears of it (unless it is the one who did it); one left unassigned is in the queue anew. */
    assignedByHand(conversationId: string, assignee: string | null, previous: string | null, by: Operator): void {
      events.emit({ type: 'conversation', conversationId });
      if (assignee !== null) {
        declined.delete(conversationId);
        if (assignee !== by.id) void track(announceAssigned(conversationId, assignee, by));
        void track(autoAssign.pass());
        return;
      }
      if (previous !== null) declined.set(conversationId, new Set([...(declined.get(conversationId) ?? []), previous]));
      void track(
        (async () => {
          if ((await store.conversations.byId(conversationId))?.needsHuman) await needsHuman(conversationId, 'needs_human', by.id);
          else await autoAssign.pass();
        })(),
      );
    },
    /** An agent was disabled: what they held that still needs a human goes to the queue at once. */
    disabled: (agentId: string): Promise<void> => track(returnNow(agentId, 'agent disabled, back to the queue', 'was disabled')),
    /** Online, away or offline (the agents view shows it next to each account). */
    presenceOf,
    /** Who is online or away on this node's own consoles (told to the other nodes). */
    present: () => presence.present(),
    /** A console of this account opened an event stream (presence); returns what its closing does. */
    streamOpened: (agentId: string): (() => void) => presence.streamOpened(agentId),
    heartbeat(agentId: string, input: { away: boolean; viewing: string | null; typing: string | null }): Presence {
      const now = presence.heartbeat(agentId, input.away);
      activity.set(agentId, input.viewing, input.typing);
      return now;
    },
    async members(): Promise<TeamMember[]> {
      const open = await store.team.openCounts();
      return (await accounts()).map((a) => ({ id: a.id, name: a.name, role: a.role, owner: a.owner, presence: presenceOf(a.id), openAssigned: open.get(a.id) ?? 0, capacity: a.capacity }));
    },
    activity: () => activity.snapshot(),
    /** After the writer is up: the first sweep (conversations of agents not back after a restart return in time), then every TEAM_SWEEP_MS. */
    start(): void {
      void track(sweep());
      armSweep();
    },
    busy: (): number => work.size + autoAssign.busy(),
    settled: async (): Promise<void> => {
      await Promise.all([...work, autoAssign.settled()]);
    },
    stop(): void {
      stopped = true;
      sweepTimer?.();
      for (const cancel of returnTimers.values()) cancel();
      returnTimers.clear();
      presence.stop();
      activity.stop();
    },
  };
}

export type Team = ReturnType<typeof createTeam>;
