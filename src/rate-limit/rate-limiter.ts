import type { Rate } from '../domain/token-bucket.js';

/**
 * What a limiter says of one request: allowed or refused with the tokens left, or `unknown` when it could
 * not tell (the shared limiter is unreachable); the caller's FailOpen policy decides what that means.
 */
export type Decision =
  | { readonly outcome: 'allowed' | 'refused'; readonly tokens: number }
  | { readonly outcome: 'unknown'; readonly error: unknown };

/** Token buckets by name: per process in memory, or shared by every instance through Redis. */
export interface RateLimiter {
  /** Takes `cost` tokens if they are there (cost 0 only reads the bucket). */
  take(bucket: string, rate: Rate, cost: number): Promise<Decision>;
  /** Resolves when the limiter can answer, or when waiting longer would only delay the start. */
  ready(): Promise<void>;
  close(): Promise<void>;
}
