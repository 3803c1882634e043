import { addressKey as limiterKey } from '../auth/address-limiter.ts';

/**
 * Failed sign-ins (protocol v1.2, section 9): at most 5 per account per 15 minutes, and at most
 * 20 per address per 15 minutes (the protocol names a per-address limit without a figure; 20 lets
 * an office behind one address mistype a few times each). Counted in a sliding window; once a key
 * is over, every attempt is refused (`Retry-After` = until its oldest failure leaves the window)
 * without a password being hashed, so a guesser gains nothing by keeping on. Memory is bounded:
 * past `maxKeys`, the key seen longest ago is forgotten.
 */
export interface SignInLimits {
  perAccount: number;
  perAddress: number;
  windowMs: number;
  maxKeys: number;
}

export const SIGN_IN_LIMITS: SignInLimits = { perAccount: 5, perAddress: 20, windowMs: 15 * 60_000, maxKeys: 10_000 };

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; by: 'account' | 'address' };

export function createSignInThrottle(limits: SignInLimits = SIGN_IN_LIMITS) {
  // Insertion order is recency order: a key is deleted and set again on each failure.
  const failures = new Map<string, number[]>();

  function recent(key: string, now: number): number[] {
    const times = failures.get(key);
    if (!times) return [];
    const kept = times.filter((t) => now - t < limits.windowMs);
    if (kept.length) failures.set(key, kept);
    else failures.delete(key);
    return kept;
  }

  function over(key: string, max: number, now: number): number | null {
    const times = recent(key, now);
    if (times.length < max) return null;
    return Math.max(1, Math.ceil((times[times.length - max]! + limits.windowMs - now) / 1000));
  }

  const accountKey = (id: string): string => `a:${id.normalize('NFC').toLowerCase()}`;
  // IPv6 by its /64, canonical: one subscriber holds a whole /64 and could take a fresh address per attempt.
  const addressKey = (address: string): string => `n:${limiterKey(address)}`;

  function takeBack(accountId: string, address: string, at: number): void {
    for (const key of [accountKey(accountId), addressKey(address)]) {
      const times = failures.get(key);
      const i = times?.lastIndexOf(at) ?? -1;
      if (times && i >= 0) times.splice(i, 1);
    }
  }

  return {
    /** Before any password is checked. The id need not exist: an unknown one is limited the same. */
    check(accountId: string, address: string, now: number): ThrottleDecision {
      const byAccount = over(accountKey(accountId), limits.perAccount, now);
      if (byAccount !== null) return { allowed: false, retryAfterSeconds: byAccount, by: 'account' };
      const byAddress = over(addressKey(address), limits.perAddress, now);
      if (byAddress !== null) return { allowed: false, retryAfterSeconds: byAddress, by: 'address' };
      return { allowed: true };
    },
    /**
     * Counts an attempt as failed before its password is checked, so attempts sent in parallel
     * are all counted (checking first and counting after the hash let 30 at once through). A
     * right password takes it back (`succeed`).
     */
    fail(accountId: string, address: string, now: number): void {
      for (const key of [accountKey(accountId), addressKey(address)]) {
        const times = recent(key, now);
        failures.delete(key);
        failures.set(key, [...times, now]);
      }
      while (failures.size > limits.maxKeys) failures.delete(failures.keys().next().value!);
    },
    /**
     * A right password clears the account's failures, and takes back the address's count of this
     * attempt (reserved at `now` by `fail`); the address's other failures stay: others may share it.
     */
    succeed(accountId: string, address?: string, reservedAt?: number): void {
      if (address !== undefined && reservedAt !== undefined) takeBack(accountId, address, reservedAt);
      failures.delete(accountKey(accountId));
    },
    /** An attempt reserved at `at` that checked no password (the service was busy): it does not count. */
    takeBack,
    get size(): number {
      return failures.size;
    },
  };
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>;
