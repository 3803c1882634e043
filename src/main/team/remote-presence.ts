import type { Clock } from '../../shared/clock.ts';
import { TEAM_TIMING, type Presence } from '../../shared/console-team.ts';

/** How often a node tells the others again who is online or away on it: well within their TTL. */
export const PRESENCE_REPEAT_MS = 30_000;

/**
 * Who is online on the other nodes of a PostgreSQL installation (issue 30), from the presence
 * events they relay: each node says who is online or away among its consoles when it changes and
 * again every PRESENCE_REPEAT_MS. What a node heard holds for offlineAfterMs (90 s, the same
 * figure as a console's own silence), so the agents of a node that died count as offline after
 * that, as if their consoles had gone quiet; an agent whose consoles are on several nodes is
 * online if any node says so.
 */
export function createRemotePresence(deps: { clock: Pick<Clock, 'now'>; ttlMs?: number }) {
  const ttl = deps.ttlMs ?? TEAM_TIMING.offlineAfterMs;
  /** By agent, then by node: what that node said and until when it holds. */
  const heard = new Map<string, Map<string, { presence: Exclude<Presence, 'offline'>; until: number }>>();
  /** When some node last said anything of the agent: a sign of life, or the moment they left it. */
  const lastHeard = new Map<string, number>();
  return {
    heard(nodeId: string, agentId: string, presence: Presence): void {
      lastHeard.set(agentId, deps.clock.now());
      let nodes = heard.get(agentId);
      if (presence === 'offline') {
        nodes?.delete(nodeId);
        if (nodes?.size === 0) heard.delete(agentId);
        return;
      }
      if (!nodes) heard.set(agentId, (nodes = new Map()));
      nodes.set(nodeId, { presence, until: deps.clock.now() + ttl });
    },
    presenceOf(agentId: string): Presence {
      const now = deps.clock.now();
      let best: Presence = 'offline';
      for (const [node, h] of heard.get(agentId) ?? []) {
        if (h.until <= now) heard.get(agentId)!.delete(node);
        else if (h.presence === 'online') return 'online';
        else best = 'away';
      }
      return best;
    },
    /** The last time another node spoke of the agent (−∞: never): their offline time there is no earlier. */
    lastHeard(agentId: string): number {
      return lastHeard.get(agentId) ?? Number.NEGATIVE_INFINITY;
    },
  };
}

export type RemotePresence = ReturnType<typeof createRemotePresence>;

/** The better of two: online over away over offline (an agent on two nodes is as present as their best console). */
export function presentest(a: Presence, b: Presence): Presence {
  if (a === 'online' || b === 'online') return 'online';
  if (a === 'away' || b === 'away') return 'away';
  return 'offline';
}
