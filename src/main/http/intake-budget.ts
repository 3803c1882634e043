/**
 * Memory that requests not yet authenticated may hold. Without it every admitted request buffered
 * up to the body limit, and the address gate charged only when a request ended: 50 concurrent 8 MB
 * bodies from an unknown client took RSS from 483 MiB to 1.4 GiB. A request's bytes are charged to
 * its address's share and to the total as they arrive; one whose declared length does not fit
 * when it starts is refused at once, and one that outgrows the budget on the way is cut off.
 */
export interface IntakeLimits {
  /** Bytes all requests not yet authenticated may hold together. */
  totalBytes: number;
  /** Bytes the requests of one address (IPv6: one /64) may hold together. */
  perAddressBytes: number;
  /** Open connections per address; a connection past it is answered 429 and closed. */
  perAddressConnections: number;
  /** How long a body not yet authenticated may take to arrive, once its headers are in (then 408). */
  bodyTimeoutMs: number;
  /**
   * Open connections in all; past it a new one is closed at once, unanswered (Node's
   * maxConnections). 12,000 connections each holding 15 KB of unfinished headers took 178 MiB.
   */
  maxConnections: number;
}

export const DEFAULT_INTAKE: IntakeLimits = {
  totalBytes: 32 * 1024 * 1024,
  perAddressBytes: 16 * 1024 * 1024,
  perAddressConnections: 256,
  bodyTimeoutMs: 10_000,
  maxConnections: 4096,
};

/** Which share ran out: the address's own (429) or the server's (503). */
export type IntakeScope = 'address' | 'total';

export interface IntakeLease {
  /** Takes `bytes` more; the scope that cannot give them, or null. */
  grow(bytes: number): IntakeScope | null;
  /** Gives everything back; later calls do nothing. */
  release(): void;
}

export function createIntakeBudget(limits: IntakeLimits) {
  let total = 0;
  const byAddress = new Map<string, number>();
  const connections = new Map<string, number>();

  function fits(key: string, bytes: number): IntakeScope | null {
    if ((byAddress.get(key) ?? 0) + bytes > limits.perAddressBytes) return 'address';
    if (total + bytes > limits.totalBytes) return 'total';
    return null;
  }

  function take(key: string, bytes: number): IntakeScope | null {
    const refused = fits(key, bytes);
    if (refused) return refused;
    byAddress.set(key, (byAddress.get(key) ?? 0) + bytes);
    total += bytes;
    return null;
  }

  function give(key: string, bytes: number): void {
    const left = (byAddress.get(key) ?? 0) - bytes;
    if (left <= 0) byAddress.delete(key);
    else byAddress.set(key, left);
    total -= bytes;
  }

  return {
    limits,
    /** Whether `bytes` more would fit for `key` now, without taking them: null, or the scope that is full. */
    fits,
    /** A lease of `bytes` for a request from `key`, or the scope that refused it. */
    reserve(key: string, bytes: number): IntakeLease | IntakeScope {
      const refused = take(key, bytes);
      if (refused) return refused;
      let held = bytes;
      let open = true;
      return {
        grow(more) {
          if (!open) return null;
          const no = take(key, more);
          if (!no) held += more;
          return no;
        },
        release() {
          if (!open) return;
          open = false;
          give(key, held);
        },
      };
    },
    /** Counts a new connection of `key`; false when it is one too many (it is counted anyway: call `closed`). */
    connected(key: string): boolean {
      const n = (connections.get(key) ?? 0) + 1;
      connections.set(key, n);
      return n <= limits.perAddressConnections;
    },
    closed(key: string): void {
      const n = (connections.get(key) ?? 0) - 1;
      if (n <= 0) connections.delete(key);
      else connections.set(key, n);
    },
    /** Bytes held now (the metrics and the tests read it). */
    held: () => total,
  };
}

export type IntakeBudget = ReturnType<typeof createIntakeBudget>;
