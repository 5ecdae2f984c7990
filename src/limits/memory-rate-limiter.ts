import { type BucketState, type Rate, takeTokens } from '../domain/token-bucket.js';
import type { Decision, RateLimiter } from './rate-limiter.js';

/** Buckets beyond this many are swept of the full ones, so idle keys and addresses cost no memory. */
const SWEEP_AT = 10_000;

/** Per-process buckets: with several instances each one limits on its own (use REDIS_URL to share). */
export class MemoryRateLimiter implements RateLimiter {
  readonly shared = false;
  readonly #buckets = new Map<string, BucketState>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.timeOrigin / 1000 + performance.now() / 1000) {
    this.#now = now;
  }

  async take(bucket: string, rate: Rate, cost: number): Promise<Decision> {
    const now = this.#now();
    const { allowed, state } = takeTokens(this.#buckets.get(bucket), now, rate, cost);
    if (cost > 0) this.#buckets.set(bucket, state);
    if (this.#buckets.size > SWEEP_AT) this.#sweep(now, rate);
    return { allowed, tokens: state.tokens };
  }

  #sweep(now: number, rate: Rate): void {
    for (const [name, state] of this.#buckets) {
      if (takeTokens(state, now, rate, 0).state.tokens >= rate.burst) this.#buckets.delete(name);
    }
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {
    this.#buckets.clear();
  }
}
