import { isIPv4, isIPv6 } from 'node:net';
import type { RateDecision } from './rate-limiter.ts';

export interface AddressLimit {
  enabled: boolean;
  /** Failed requests an address earns back per second. */
  perSecond: number;
  /** Failed requests an address may send at once before it is refused. */
  burst: number;
  /** Most addresses remembered; beyond it the least recently seen is forgotten. */
  maxAddresses: number;
}

function expandIPv6(address: string): number[] | null {
  const [head = '', tail] = address.split('::', 2) as [string, string | undefined];
  const parse = (part: string): string[] => (part === '' ? [] : part.split(':'));
  let left = parse(head);
  let right = tail === undefined ? [] : parse(tail);
  // An embedded IPv4 tail (::ffff:1.2.3.4) is two 16-bit groups.
  const last = (tail === undefined ? left : right).at(-1);
  if (last && isIPv4(last)) {
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    const groups = [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    if (tail === undefined) left = [...left.slice(0, -1), ...groups];
    else right = [...right.slice(0, -1), ...groups];
  }
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  return [...left, ...new Array<string>(missing).fill('0'), ...right].map((g) => parseInt(g, 16));
}

/**
 * The key an address is limited by: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64,
 * because one subscriber usually holds a whole /64 and could otherwise take a fresh address per
 * request.
 */
export function addressKey(remote: string | undefined): string {
  if (!remote) return 'unknown';
  const bare = remote.replace(/%.*$/, '');
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return bare.slice(0, 64);
  const groups = expandIPv6(bare.toLowerCase());
  if (!groups) return bare;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets per address with bounded memory: an address costs memory only while it has
 * failures to be remembered for. A bucket that has refilled is the same as no bucket, so idle
 * ones are dropped as new ones come; past `maxAddresses` the least recently charged goes.
 */
export function createAddressLimiter(limit: AddressLimit) {
  // Map order is least recently charged first: charge() moves an address to the end.
  const buckets = new Map<string, Bucket>();
  const refill = (b: Bucket, now: number): number => Math.min(limit.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * limit.perSecond);
  const idle = (b: Bucket, now: number): boolean => refill(b, now) >= limit.burst;

  function evict(now: number): void {
    // Amortized: look at a couple of the oldest entries each time, and make room when full.
    for (let i = 0; i < 2; i++) {
      const first = buckets.entries().next();
      if (first.done || !idle(first.value[1], now)) break;
      buckets.delete(first.value[0]);
    }
    while (buckets.size >= limit.maxAddresses) buckets.delete(buckets.keys().next().value!);
  }

  return {
    /** Whether a request from `key` may be processed at all. Asking costs nothing. */
    admit(key: string, now: number): RateDecision {
      if (!limit.enabled) return { allowed: true };
      const b = buckets.get(key);
      if (!b) return { allowed: true };
      const tokens = refill(b, now);
      if (tokens >= 1) return { allowed: true };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / limit.perSecond)) };
    },
    /**
     * A request from `key` failed before or at authentication: one token. Requests admitted
     * together may overdraw (they are charged when they fail, not held while they run, so a slow
     * honest request never blocks its address); the debt is capped so an address always recovers.
     */
    charge(key: string, now: number, cost = 1): void {
      if (!limit.enabled) return;
      let b = buckets.get(key);
      if (b) buckets.delete(key);
      else {
        evict(now);
        b = { tokens: limit.burst, at: now };
      }
      b.tokens = Math.max(-limit.burst, refill(b, now) - cost);
      b.at = Math.max(b.at, now);
      // Re-inserted: the map stays in order of last failure.
      buckets.set(key, b);
    },
    size: () => buckets.size,
  };
}

export type AddressLimiter = ReturnType<typeof createAddressLimiter>;

/**
 * The gate in front of the signature check. The rule: a request to the endpoint costs its remote
 * address one token only when it is refused before or at authentication (unsigned, badly signed,
 * unknown client, stale timestamp, bad JSON, wrong media type, too large). An address whose bucket
 * is empty gets 429 before its body is read or parsed. Requests that authenticate cost the address
 * nothing (the per-client limit governs them), and a connection that has carried an authenticated
 * request passes the gate even while its address is refused, so an honest client that keeps its
 * connection open is served when another host behind the same address floods.
 */
export function createPreAuthGate(limiter: AddressLimiter) {
  const trusted = new WeakSet<object>();
  return {
    /** Whether `connection` has carried an authenticated request (and kept its pass). */
    trusts: (connection: object): boolean => trusted.has(connection),
    admit(connection: object, remote: string | undefined, now: number): RateDecision {
      if (trusted.has(connection)) return { allowed: true };
      return limiter.admit(addressKey(remote), now);
    },
    /**
     * After a processed request: charge a refusal before or at authentication, one token and one
     * more per MiB of body it sent or declared (the work it made us do: a flood of 8 MB bodies is
     * cut off after about a dozen, not after the burst's hundred); trust an authenticated connection.
     */
    settle(connection: object, remote: string | undefined, outcome: { authenticated: boolean; refused: boolean; bodyBytes?: number }, now: number): void {
      if (outcome.authenticated) {
        trusted.add(connection);
        return;
      }
      if (!outcome.refused) return;
      const key = addressKey(remote);
      limiter.charge(key, now, 1 + Math.floor((outcome.bodyBytes ?? 0) / (1024 * 1024)));
      // A trusted connection that then floods with failures loses its pass once the address is out.
      if (!limiter.admit(key, now).allowed) trusted.delete(connection);
    },
  };
}

export type PreAuthGate = ReturnType<typeof createPreAuthGate>;
