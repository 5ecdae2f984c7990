import type { Rate } from '../domain/token-bucket.js';

export interface Decision {
  readonly allowed: boolean;
  /** Tokens left after this request; NaN when the limiter could not tell (it failed open). */
  readonly tokens: number;
}

/** Token buckets by name: per process in memory, or shared by every instance through Redis. */
export interface RateLimiter {
  readonly shared: boolean;
  /** Takes `cost` tokens if they are there (cost 0 only reads the bucket). */
  take(bucket: string, rate: Rate, cost: number): Promise<Decision>;
  /** Resolves when the limiter can answer, or when waiting longer would only delay the start. */
  ready(): Promise<void>;
  close(): Promise<void>;
}
