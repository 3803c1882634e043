import type { Clock } from '../../shared/clock.ts';
import { TEAM_TIMING, type Presence } from '../../shared/console-team.ts';

export interface PresenceDeps {
  clock: Clock;
  /** No event stream and no heartbeat for this long: offline (protocol: 90 s). */
  offlineAfterMs?: number;
  onChange: (agentId: string, presence: Presence) => void;
}

interface Seen {
  /** Event streams this account's consoles hold open now. */
  streams: number;
  /** The last heartbeat, or when the last stream closed. */
  lastSeen: number;
  /** The last sign was a stream closing: online only by the grace a reconnecting console gets. */
  left: boolean;
  /** What the console said: set by hand, or after 10 minutes without input. */
  away: boolean;
  presence: Presence;
  /** When it went offline (for the return to the queue). */
  offlineSince: number;
  cancel: (() => void) | null;
}

/**
 * Who is online, away or offline (protocol v1.2): online while a console of theirs holds an event
 * stream or sent a heartbeat within 90 s, away when that console says so, offline otherwise. In
 * memory: after a restart everyone is offline until their console reconnects (a few seconds), and
 * counts as offline since the start for the return of their conversations to the queue.
 */
export function createPresence(deps: PresenceDeps) {
  const { clock } = deps;
  const offlineAfter = deps.offlineAfterMs ?? TEAM_TIMING.offlineAfterMs;
  const startedAt = clock.now();
  const seen = new Map<string, Seen>();

  function entry(agentId: string): Seen {
    let s = seen.get(agentId);
    if (!s) seen.set(agentId, (s = { streams: 0, lastSeen: Number.NEGATIVE_INFINITY, left: false, away: false, presence: 'offline', offlineSince: startedAt + offlineAfter, cancel: null }));
    return s;
  }

  function update(agentId: string, s: Seen): void {
    const now = clock.now();
    s.cancel?.();
    s.cancel = null;
    const gone = s.streams === 0 && now - s.lastSeen >= offlineAfter;
    const next: Presence = gone ? 'offline' : s.away ? 'away' : 'online';
    // Without a stream, the next check is when the last sign of life runs out.
    if (!gone && s.streams === 0) s.cancel = clock.after(s.lastSeen + offlineAfter - now, () => update(agentId, s));
    if (next === s.presence) return;
    s.presence = next;
    if (next === 'offline') s.offlineSince = Math.min(now, s.lastSeen + offlineAfter);
    deps.onChange(agentId, next);
  }

  return {
    /** A console of this account opened an event stream; the returned function closes it (once). */
    streamOpened(agentId: string): () => void {
      const s = entry(agentId);
      s.streams++;
      s.lastSeen = clock.now();
      update(agentId, s);
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        s.streams--;
        s.lastSeen = clock.now();
        s.left = true;
        update(agentId, s);
      };
    },
    heartbeat(agentId: string, away: boolean): Presence {
      const s = entry(agentId);
      s.lastSeen = clock.now();
      s.left = false;
      s.away = away;
      update(agentId, s);
      return s.presence;
    },
    presenceOf(agentId: string): Presence {
      return seen.get(agentId)?.presence ?? 'offline';
    },
    /** Online or away here only because a console of theirs left a moment ago (no stream open, no heartbeat since). */
    lingering(agentId: string): boolean {
      const s = seen.get(agentId);
      return s !== undefined && s.presence !== 'offline' && s.streams === 0 && s.left;
    },
    /**
     * When the account went offline. One not seen since the service started counts as gone
     * offlineAfterMs after the start, as if their console had been there then: a restart gives
     * consoles the same grace to reconnect as a dropped connection.
     */
    offlineSince(agentId: string): number {
      return seen.get(agentId)?.offlineSince ?? startedAt + offlineAfter;
    },
    /** Everyone online or away here now (what this node tells the others again every PRESENCE_REPEAT_MS). */
    present(): Array<{ agentId: string; presence: Presence }> {
      return [...seen].flatMap(([agentId, s]) => (s.presence === 'offline' ? [] : [{ agentId, presence: s.presence }]));
    },
    stop(): void {
      for (const s of seen.values()) s.cancel?.();
    },
  };
}

export type PresenceTracker = ReturnType<typeof createPresence>;
