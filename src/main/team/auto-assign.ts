import type { Clock } from '../../shared/clock.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { StoreContract } from '../store/contract.ts';

/** An account auto-assignment may give conversations to: online, enabled, with a capacity above 0. */
export interface Candidate {
  id: string;
  capacity: number;
}

export interface AutoAssignDeps {
  team: Pick<StoreContract['team'], 'openCounts' | 'waitingUnassigned'>;
  writer: MessageWriter;
  clock: Clock;
  /** Whether it runs at all (the setting, in team mode). */
  enabled: () => Promise<boolean>;
  candidates: () => Promise<Candidate[]>;
  /** Who gave this conversation up by hand: it is not handed straight back to them. */
  declined: (conversationId: string) => ReadonlySet<string> | undefined;
  /** A conversation was claimed for an agent (committed). */
  onClaim: (conversationId: string, agentId: string) => Promise<void>;
  log: (line: string) => void;
}

/**
 * Auto-assignment (protocol v1.2): the queue (unassigned conversations that need a human, longest
 * wait first) goes to online agents with room, each to the one with the fewest open conversations
 * (ties: the one given a conversation longest ago, then by id). A pass runs when a conversation
 * newly needs a human, when an agent comes online or a slot frees up, and on a periodic sweep, so a
 * conversation left in the queue is picked up as soon as someone can take it.
 *
 * The choice is made on reads; the claim is a conditional UPDATE on the writer (still unassigned,
 * still needing a human, the agent still under capacity), so another process or another pass
 * deciding at the same moment can never make it two assignees or one too many.
 */
export function createAutoAssign(deps: AutoAssignDeps) {
  const lastGiven = new Map<string, number>();
  let chain: Promise<void> = Promise.resolve();
  let queued = false;
  let running = 0;

  async function run(): Promise<void> {
    if (!(await deps.enabled())) return;
    const counts = await deps.team.openCounts();
    const room = (await deps.candidates())
      .map((c) => ({ ...c, open: counts.get(c.id) ?? 0 }))
      .filter((c) => c.open < c.capacity);
    const free = room.reduce((sum, c) => sum + (c.capacity - c.open), 0);
    if (free === 0) return;
    for (const conversationId of await deps.team.waitingUnassigned(free)) {
      const gaveUp = deps.declined(conversationId);
      const open = room.filter((c) => c.open < c.capacity && !gaveUp?.has(c.id));
      if (open.length === 0) continue;
      open.sort((a, b) => a.open - b.open || (lastGiven.get(a.id) ?? 0) - (lastGiven.get(b.id) ?? 0) || (a.id < b.id ? -1 : 1));
      const pick = open[0]!;
      const now = deps.clock.now();
      const result = await deps.writer.submit({ kind: 'claim', conversationId, agentId: pick.id, capacity: pick.capacity, now });
      if (result?.kind === 'claimed' && result.claimed) {
        pick.open++;
        lastGiven.set(pick.id, now);
        await deps.onClaim(conversationId, pick.id);
      } else {
        // Someone else took it, or this agent's load changed elsewhere: go on with fresh counts.
        const fresh = await deps.team.openCounts();
        for (const c of room) c.open = fresh.get(c.id) ?? 0;
      }
    }
  }

  return {
    /**
     * Runs a pass after the one running now, if any; calls that arrive while one waits share it.
     * Resolves when that pass is over.
     */
    pass(): Promise<void> {
      if (queued) return chain;
      queued = true;
      running++;
      chain = chain
        .then(() => {
          queued = false;
          return run();
        })
        .catch((error: unknown) => deps.log(`auto-assignment failed: ${(error as Error).message}`))
        .finally(() => void running--);
      return chain;
    },
    /** Passes queued or running (for quiesce). */
    busy: (): number => running,
    settled: (): Promise<void> => chain,
  };
}
