import type { PendingLane } from '../store/delivery-lanes.ts';
import type { ClaimedDelivery, Lane } from '../store/pg/leases/pg-leases.ts';
import type { Held, ShareLimits } from './fair-share.ts';

/** Where a PostgreSQL node finds and claims due work, lane by lane. */
export interface ClaimSource {
  /** Clients with pending deliveries. */
  clients(): Promise<readonly string[]>;
  /** A client's lanes with pending deliveries, each with its earliest pending one. */
  lanes(clientId: string): Promise<readonly PendingLane[]>;
  /** Claims (leases) up to `limit` of a lane's due deliveries, oldest first, one per conversation across every node. */
  claim(lane: Lane, limit: number): Promise<ClaimedDelivery[]>;
}

interface OpenLane extends Lane {
  /** Its earliest pending delivery's time and id (a bound), then the last one claimed from it. */
  at: number;
  id: number;
  /** A claim came back short: nothing more of it may go now (held by another node, behind an in-flight one, not due). */
  drained: boolean;
}

/**
 * fair-share.ts's rule on PostgreSQL: each free slot goes to the lane whose client holds fewest
 * slots, then whose origin holds fewest, then whose due work is oldest; no client beyond
 * perClient, no origin beyond perOrigin. A read there is a claim here (the rows are this node's
 * once read), so a lane is claimed a fair part of the free slots at a time and every row claimed
 * is taken: a claim never asks for more than the lane's client and origin may still hold.
 *
 * The caps and the loads are this node's: N nodes may hold up to N × perClient slots of one
 * client, and N × perOrigin of one receiver, between them.
 */
export async function claimFair(source: ClaimSource, held: Held, limits: ShareLimits, now: number, onError?: (error: unknown) => void): Promise<ClaimedDelivery[]> {
  const taken: ClaimedDelivery[] = [];
  if (limits.free <= 0) return taken;
  const byClient = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  const clientLoad = (id: string): number => byClient.get(id) ?? held.client(id);
  const originLoad = (origin: string): number => byOrigin.get(origin) ?? held.origin(origin);

  const lanes: OpenLane[] = [];
  for (const clientId of await source.clients()) {
    if (clientLoad(clientId) >= limits.perClient) continue;
    for (const l of await source.lanes(clientId)) {
      if (l.earliestAt <= now) lanes.push({ clientId, origin: l.origin, at: l.earliestAt, id: l.earliestId, drained: false });
    }
  }
  const batch = Math.max(1, Math.ceil(limits.free / Math.max(1, lanes.length)));
  const open = (l: OpenLane): boolean => !l.drained && clientLoad(l.clientId) < limits.perClient && originLoad(l.origin) < limits.perOrigin;
  const order = (a: OpenLane, b: OpenLane): number =>
    clientLoad(a.clientId) - clientLoad(b.clientId) || originLoad(a.origin) - originLoad(b.origin) || a.at - b.at || a.id - b.id;

  while (taken.length < limits.free) {
    let best: OpenLane | null = null;
    for (const l of lanes) if (open(l) && (best === null || order(l, best) < 0)) best = l;
    if (best === null) break;
    const room = Math.min(limits.free - taken.length, limits.perClient - clientLoad(best.clientId), limits.perOrigin - originLoad(best.origin));
    const limit = Math.min(room, batch);
    let got: ClaimedDelivery[];
    try {
      got = await source.claim({ clientId: best.clientId, origin: best.origin }, limit);
    } catch (error) {
      // The lanes claimed before are this node's now: send them, and say why the rest waits.
      if (taken.length === 0) throw error;
      onError?.(error);
      break;
    }
    if (got.length < limit) best.drained = true;
    for (const d of got) {
      taken.push(d);
      byClient.set(d.clientId, clientLoad(d.clientId) + 1);
      byOrigin.set(d.origin, originLoad(d.origin) + 1);
    }
    const last = got.at(-1);
    if (last) [best.at, best.id] = [last.nextAttemptAt, last.id];
  }
  return taken;
}
