/**
 * A token bucket: `burst` tokens at most, refilled at `perSecond`; one token per request. This is the one
 * formula of the rate limits: the memory limiter runs it, the Redis script (rate-limit/redis-buckets.ts)
 * mirrors it in Lua, and a Redis lease (rate-limit/token-lease.ts) estimates the shared bucket with it.
 */
export interface Rate {
  readonly perSecond: number;
  readonly burst: number;
}

export interface BucketState {
  readonly tokens: number;
  /** Seconds (any epoch) of the last update. */
  readonly at: number;
}

/** The tokens in the bucket at `now`: refilled since its last update, at most the burst; a new one is full. */
export function refill(state: BucketState | undefined, now: number, rate: Rate): number {
  return state === undefined ? rate.burst : Math.min(rate.burst, state.tokens + (now - state.at) * rate.perSecond);
}

/** Refills the bucket up to `now` and, if `cost` tokens are there, takes them. */
export function takeTokens(
  state: BucketState | undefined,
  now: number,
  rate: Rate,
  cost: number,
): { allowed: boolean; state: BucketState } {
  const refilled = refill(state, now, rate);
  const allowed = refilled >= cost;
  return { allowed, state: { tokens: allowed ? refilled - cost : refilled, at: now } };
}

/** Seconds until one token is there again (Retry-After), and until the bucket is full (RateLimit `t`). */
export function waits(tokens: number, rate: Rate): { retryAfter: number; untilFull: number } {
  return {
    retryAfter: Math.max(1, Math.ceil((1 - tokens) / rate.perSecond)),
    untilFull: Math.max(0, Math.ceil((rate.burst - tokens) / rate.perSecond)),
  };
}
