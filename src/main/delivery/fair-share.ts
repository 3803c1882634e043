import type { DeliveryRow } from '../store/deliveries.ts';
import type { PendingLane } from '../store/delivery-lanes.ts';

/**
 * How the outbox shares its slots (issue 27: one client's dead receiver held all 64 for 15 s a
 * try, and another client's reply waited 22 s more). Work is read per lane, a client and a
 * send_url origin; each client and each origin may hold at most its cap of slots, and every free
 * slot goes to the lane whose client holds fewest, then whose origin holds fewest, then whose due
 * delivery is oldest. A client with nothing in flight is therefore served first at the next free
 * slot, whatever others have queued: a dead receiver delays it by one try's time-out at most, and
 * not at all while the slots it may not take are free.
 */
export interface ShareLimits {
  /** Slots free in the whole outbox now. */
  free: number;
  perClient: number;
  perOrigin: number;
}

/** Where the due work is: the store, seen through what the outbox holds already. */
export interface LaneSource {
  /** Clients with pending deliveries. */
  clients(): readonly string[];
  /** A client's lanes with pending deliveries, each with its earliest pending one. */
  lanes(clientId: string): readonly PendingLane[];
  /** A lane's due deliveries, oldest first, one per conversation at most, none of `read` (nor of those held). */
  due(clientId: string, origin: string, limit: number, read: readonly number[]): DeliveryRow[];
}

/** Slots each client and each origin holds now (requests on their way). */
export interface Held {
  client(clientId: string): number;
  origin(origin: string): number;
}

interface Lane {
  clientId: string;
  origin: string;
  /**
   * The lane's next due delivery's (time, id) once `rows` is read; before, its earliest pending
   * one's, which no due delivery of the lane precedes: a bound, so a lane is read only when even
   * its bound is the best choice.
   */
  at: number;
  id: number;
  rows: DeliveryRow[] | null;
  /** The last read filled its limit: there may be more. */
  more: boolean;
  /** Ids read this scan, all taken by the time the lane is read again. */
  read: number[];
}

/** The deliveries to start now, in the order they were chosen. */
export function pickFair(source: LaneSource, held: Held, limits: ShareLimits, now: number): DeliveryRow[] {
  const taken: DeliveryRow[] = [];
  if (limits.free <= 0) return taken;
  const byClient = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  const clientLoad = (id: string): number => byClient.get(id) ?? held.client(id);
  const originLoad = (origin: string): number => byOrigin.get(origin) ?? held.origin(origin);

  const lanes: Lane[] = [];
  for (const clientId of source.clients()) {
    // A client at its cap is not read at all: its backlog costs this scan nothing.
    if (clientLoad(clientId) >= limits.perClient) continue;
    for (const l of source.lanes(clientId)) {
      if (l.earliestAt <= now) lanes.push({ clientId, origin: l.origin, at: l.earliestAt, id: l.earliestId, rows: null, more: true, read: [] });
    }
  }
  // Read a lane's fair part of the free slots at a time, not all of them: others may need them.
  const batch = Math.max(1, Math.ceil(limits.free / Math.max(1, lanes.length)));

  const open = (l: Lane): boolean =>
    (l.rows === null || l.rows.length > 0 || l.more) && clientLoad(l.clientId) < limits.perClient && originLoad(l.origin) < limits.perOrigin;
  const order = (a: Lane, b: Lane): number =>
    clientLoad(a.clientId) - clientLoad(b.clientId) || originLoad(a.origin) - originLoad(b.origin) || a.at - b.at || a.id - b.id;

  while (taken.length < limits.free) {
    let best: Lane | null = null;
    for (const l of lanes) if (open(l) && (best === null || order(l, best) < 0)) best = l;
    if (best === null) break;
    if (best.rows === null || best.rows.length === 0) {
      const room = Math.min(limits.free - taken.length, limits.perClient - clientLoad(best.clientId), limits.perOrigin - originLoad(best.origin));
      const limit = Math.min(room, batch);
      best.rows = source.due(best.clientId, best.origin, limit, best.read);
      best.more = best.rows.length === limit;
      for (const d of best.rows) best.read.push(d.id);
      // Its true place is known now: choose again.
      if (best.rows.length > 0) [best.at, best.id] = [best.rows[0]!.nextAttemptAt, best.rows[0]!.id];
      continue;
    }
    const d = best.rows.shift()!;
    taken.push(d);
    byClient.set(d.clientId, clientLoad(d.clientId) + 1);
    byOrigin.set(d.origin, originLoad(d.origin) + 1);
    // The next one read, or (none left) a bound: whatever comes next in the lane is after this one.
    const next = best.rows[0] ?? d;
    [best.at, best.id] = [next.nextAttemptAt, next.id];
  }
  return taken;
}
