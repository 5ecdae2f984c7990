import { Redis } from 'ioredis';
import type { Rate } from '../domain/token-bucket.js';
import type { Decision, RateLimiter } from './rate-limiter.js';

/**
 * The token bucket of src/domain/token-bucket.ts, run atomically in Redis on Redis's own clock, so every
 * instance takes from the same bucket and no instance's clock skew matters.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + (now - at) * rate)
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
if cost > 0 then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
end
return { allowed, tostring(tokens) }
`;

/** How long a start waits for Redis before serving with limits failing open. */
const READY_WAIT_MS = 2000;

/** The script, as ioredis defines it on the client: [1 if allowed else 0, tokens left as text]. */
interface TakeCommand {
  petstoreTake(key: string, ...args: Array<string | number>): Promise<[number, string]>;
}

export interface RedisRateLimiterOptions {
  readonly url: string;
  /** Namespace of the keys, so several deployments (or test runs) can share one Redis. */
  readonly prefix?: string;
}

/** Shared buckets. If Redis is down the service keeps serving: requests pass, and it is reported. */
export class RedisRateLimiter implements RateLimiter {
  readonly shared = true;
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: RedisRateLimiterOptions) {
    this.#prefix = options.prefix ?? 'petstore:rate:';
    this.#redis = new Redis(options.url, {
      // Fail fast while Redis is away (no queueing, no retries per command); reconnect in the background.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: 500,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.#redis.on('error', () => undefined);
    this.#redis.defineCommand('petstoreTake', { numberOfKeys: 1, lua: TAKE });
  }

  async take(bucket: string, rate: Rate, cost: number): Promise<Decision> {
    try {
      const [allowed, tokens] = await (this.#redis as unknown as TakeCommand).petstoreTake(
        this.#prefix + bucket,
        rate.perSecond,
        rate.burst,
        cost,
      );
      return { outcome: allowed === 1 ? 'allowed' : 'refused', tokens: Number(tokens) };
    } catch (error) {
      return { outcome: 'unknown', error };
    }
  }

  /** Waits for the connection, for a bounded time: a Redis that is down must not stop the service starting. */
  async ready(): Promise<void> {
    if (this.#redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, READY_WAIT_MS);
      this.#redis.once('ready', done);
    });
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
