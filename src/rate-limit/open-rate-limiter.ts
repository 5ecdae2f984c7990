import type { Config } from '../config.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import type { RateLimitOptions } from './rate-limit-plugins.js';

/**
 * Redis-backed limits when REDIS_URL is set (one limit across instances), else per process; none when off.
 * The Redis client is loaded only then (it is the largest module the service would otherwise load unused).
 */
export async function openRateLimiter(config: Config): Promise<RateLimitOptions | undefined> {
  if (config.rateLimit === undefined) return undefined;
  if (config.redisUrl === undefined) return { limiter: new MemoryRateLimiter(), perKey: config.rateLimit };
  const { RedisRateLimiter } = await import('./redis-rate-limiter.js');
  return { limiter: new RedisRateLimiter({ url: config.redisUrl }), perKey: config.rateLimit };
}
