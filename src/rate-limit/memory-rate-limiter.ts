import { type BucketState, type Rate, refill, takeTokens } from '../domain/token-bucket.js';
import type { Decision, RateLimiter } from './rate-limiter.js';

/** Buckets beyond this many are swept of the full ones, so idle keys and addresses cost no memory. */
const SWEEP_AT = 10_000;

/** Per-process buckets: with several instances each one limits on its own (use REDIS_URL to share). */
export class MemoryRateLimiter implements RateLimiter {
  /** Each bucket keeps its own rate: the sweep must judge it by that, not by the caller's. */
  readonly #buckets = new Map<string, { state: BucketState; rate: Rate }>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.timeOrigin / 1000 + performance.now() / 1000) {
    this.#now = now;
  }

  async take(bucket: string, rate: Rate, cost: number): Promise<Decision> {
    const now = this.#now();
    const { allowed, state } = takeTokens(this.#buckets.get(bucket)?.state, now, rate, cost);
    if (cost > 0) this.#buckets.set(bucket, { state, rate });
    if (this.#buckets.size > SWEEP_AT) this.#sweep(now);
    return { outcome: allowed ? 'allowed' : 'refused', tokens: state.tokens };
  }

  #sweep(now: number): void {
    for (const [name, { state, rate }] of this.#buckets) {
      if (refill(state, now, rate) >= rate.burst) this.#buckets.delete(name);
    }
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {
    this.#buckets.clear();
  }
}
