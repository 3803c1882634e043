export interface RateLimit {
  perSecond: number;
  burst: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Token bucket per client: `burst` requests at once, refilled at `perSecond`. */
export function createRateLimiter(limit: RateLimit) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(clientId: string, now: number): RateDecision {
      let b = buckets.get(clientId);
      if (!b) {
        b = { tokens: limit.burst, at: now };
        buckets.set(clientId, b);
      }
      b.tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 1000) * limit.perSecond);
      b.at = now;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return { allowed: true };
      }
      const waitMs = ((1 - b.tokens) / limit.perSecond) * 1000;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
