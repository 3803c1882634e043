import type { Clock } from '../../shared/clock.ts';
import { TEAM_TIMING, type ConversationActivity } from '../../shared/console-team.ts';

export interface ActivityDeps {
  clock: Clock;
  /** "Viewing" and "typing" vanish this long after their last refresh (protocol: about 30 s). */
  ttlMs?: number;
  /** Who views or types in a conversation changed. */
  onChange: (conversationId: string, activity: ConversationActivity) => void;
}

interface Doing {
  viewing: string | null;
  typing: string | null;
  cancel: (() => void) | null;
}

/**
 * "Ann is viewing", "Ann is typing a reply": what each account's console last said it is looking
 * at and writing in. Ephemeral, in memory: one conversation viewed and at most one typed in per
 * account (their latest console wins), gone when not refreshed within the TTL or when the account
 * goes offline. Events go out only when who views or types somewhere changes, not on each refresh.
 */
export function createActivity(deps: ActivityDeps) {
  const { clock } = deps;
  const ttl = deps.ttlMs ?? TEAM_TIMING.activityTtlMs;
  const doing = new Map<string, Doing>();

  function of(conversationId: string): ConversationActivity {
    const viewing: string[] = [];
    const typing: string[] = [];
    for (const [agentId, d] of doing) {
      if (d.viewing === conversationId) viewing.push(agentId);
      if (d.typing === conversationId) typing.push(agentId);
    }
    return { viewing: viewing.sort(), typing: typing.sort() };
  }

  function set(agentId: string, viewing: string | null, typing: string | null): void {
    const before = doing.get(agentId);
    before?.cancel?.();
    // Writing in a conversation is looking at it.
    const view = viewing ?? typing;
    const touched = new Set([before?.viewing, before?.typing, view, typing].filter((id): id is string => typeof id === 'string'));
    const changed = (before?.viewing ?? null) !== view || (before?.typing ?? null) !== typing;
    if (view === null && typing === null) doing.delete(agentId);
    else doing.set(agentId, { viewing: view, typing, cancel: clock.after(ttl, () => set(agentId, null, null)) });
    if (changed) for (const id of touched) deps.onChange(id, of(id));
  }

  return {
    set,
    clear: (agentId: string): void => set(agentId, null, null),
    of,
    /** Every conversation someone views or types in now (a console's first look). */
    snapshot(): Record<string, ConversationActivity> {
      const ids = new Set<string>();
      for (const d of doing.values()) {
        if (d.viewing) ids.add(d.viewing);
        if (d.typing) ids.add(d.typing);
      }
      return Object.fromEntries([...ids].map((id) => [id, of(id)]));
    },
    stop(): void {
      for (const d of doing.values()) d.cancel?.();
      doing.clear();
    },
  };
}

export type ActivityTracker = ReturnType<typeof createActivity>;
