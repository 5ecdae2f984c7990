import type { StartGrant } from '../domain/start-window.js';

/**
 * Where endpoints' rate limits are kept, shared by every instance: Redis when REDIS_URL is set
 * (redis-start-limiter.ts), else the database (the store's endpointStarts). Both answer as takeStarts does
 * (src/domain/start-window.ts).
 */
export interface StartLimiter {
  /** Takes up to `wanted` starts for an endpoint limited to `limit` a second, atomically across instances. */
  take(endpointId: number, limit: number, wanted: number): Promise<StartGrant>;
  /**
   * The starts of `grant`, one of this limiter's, logged at `from` (its time, or the one it was last moved
   * to), were made by `madeAt`: counted from then (moveStarts).
   */
  made(endpointId: number, grant: StartGrant, from: number, madeAt: number): Promise<void>;
}

/** Where the limits are kept when REDIS_URL is set: its URL, and the prefix of the keys (tests keep their own). */
export interface RedisStartLimits {
  readonly url: string;
  readonly keyPrefix?: string | undefined;
}
