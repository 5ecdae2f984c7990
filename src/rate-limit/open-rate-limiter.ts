import type { Config } from '../config/config.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import type { RateLimitOptions } from './rate-limit-plugins.js';

/**
 * Redis-backed limits when REDIS_URL is set (one limit across instances), else per process; none when both
 * the per-key limit (RATE_LIMIT_RPS=0) and the failed-authentication limit (AUTH_FAILURE_LIMIT=off) are off.
 * The Redis client is loaded only then (it is the largest module the service would otherwise load unused).
 */
export async function openRateLimiter(config: Config): Promise<RateLimitOptions | undefined> {
  if (config.rateLimit === undefined && !config.authFailureLimit) return undefined;
  const limits = { perKey: config.rateLimit, failedAuthentication: config.authFailureLimit };
  if (config.redisUrl === undefined) return { limiter: new MemoryRateLimiter(), ...limits };
  const { RedisRateLimiter } = await import('./redis-rate-limiter.js');
  return { limiter: new RedisRateLimiter({ url: config.redisUrl }), ...limits };
}
