/** A token bucket: `burst` tokens at most, refilled at `perSecond`; one token per request. */
export interface Rate {
  readonly perSecond: number;
  readonly burst: number;
}

export interface BucketState {
  readonly tokens: number;
  /** Seconds (any epoch) of the last update. */
  readonly at: number;
}

/** Refills the bucket up to `now` and, if `cost` tokens are there, takes them. */
export function takeTokens(
  state: BucketState | undefined,
  now: number,
  rate: Rate,
  cost: number,
): { allowed: boolean; state: BucketState } {
  const refilled =
    state === undefined ? rate.burst : Math.min(rate.burst, state.tokens + (now - state.at) * rate.perSecond);
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
