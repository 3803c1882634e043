/**
 * Remembers (client, signature) pairs of accepted requests for the replay window. A pair is
 * reserved while its request is processed, so two concurrent copies cannot both get through, and
 * released if the request is refused, so an honest retry after a 429 or a 400 is not a "replay".
 */
export interface ReplayGuard {
  /** False when the pair was accepted (or is in flight) within the window. */
  reserve(clientId: string, signature: string, now: number): boolean;
  confirm(clientId: string, signature: string, now: number): void;
  release(clientId: string, signature: string): void;
  load(entries: Iterable<{ clientId: string; signature: string; seenAt: number }>): void;
  readonly size: number;
}

export function createReplayGuard(windowMs: number): ReplayGuard {
  // Insertion order is time order, so expiry only ever looks at the front of the map.
  const seen = new Map<string, number>();
  const inFlight = new Set<string>();
  const keyOf = (clientId: string, signature: string): string => `${clientId}\u0000${signature}`;

  function expire(now: number): void {
    for (const [key, at] of seen) {
      if (at > now - windowMs) break;
      seen.delete(key);
    }
  }

  return {
    reserve(clientId, signature, now) {
      expire(now);
      const key = keyOf(clientId, signature);
      if (inFlight.has(key)) return false;
      const at = seen.get(key);
      if (at !== undefined && at > now - windowMs) return false;
      inFlight.add(key);
      return true;
    },
    confirm(clientId, signature, now) {
      const key = keyOf(clientId, signature);
      inFlight.delete(key);
      seen.delete(key);
      seen.set(key, now);
    },
    release(clientId, signature) {
      inFlight.delete(keyOf(clientId, signature));
    },
    load(entries) {
      for (const e of [...entries].sort((a, b) => a.seenAt - b.seenAt)) seen.set(keyOf(e.clientId, e.signature), e.seenAt);
    },
    get size() {
      return seen.size;
    },
  };
}
