import { Redis } from 'ioredis';
import type { Rate } from '../domain/token-bucket.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { Decision, RateLimiter } from './rate-limiter.js';

/**
 * The token bucket of src/domain/token-bucket.ts, run atomically in Redis on Redis's own clock, so every
 * instance takes from the same bucket and no instance's clock skew matters. ARGV[4] is a deadline in
 * Redis's milliseconds (0: none): a command Redis runs after it was given up by its sender (Redis paused,
 * then running its backlog) changes nothing, so no client is charged for requests that already passed.
 * Every answer carries Redis's time, which is how the sender learns the deadline to send.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local deadline = tonumber(ARGV[4])
local time = redis.call('TIME')
local ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if deadline > 0 and ms > deadline then
  return { -1, '0', ms }
end
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
return { allowed, tostring(tokens), ms }
`;

/** How long a start waits for Redis before serving with limits failing open. */
const READY_WAIT_MS = 2000;
/** A local Redis answers in well under a millisecond: past this it is hung or unreachable. */
const COMMAND_TIMEOUT_MS = 250;
/** After a failure, how often Redis is probed (in the background) before commands are sent again. */
const PROBE_EVERY_MS = 500;
/** What the script answers for a command past its deadline. */
const EXPIRED = -1;

/** The script, as ioredis defines it on the client: [1 allowed, 0 refused or -1 expired; tokens left; Redis ms]. */
interface TakeCommand {
  petstoreTake(key: string, ...args: Array<string | number>): Promise<[number, string, number]>;
}

export interface RedisRateLimiterOptions {
  readonly url: string;
  /** Namespace of the keys, so several deployments (or test runs) can share one Redis. */
  readonly prefix?: string;
}

/**
 * Shared buckets. If Redis is down or hung the service keeps serving: requests pass, and it is reported.
 * One failed command opens a circuit breaker, so a hung Redis costs one time-out, not one per request.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly shared = true;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #breaker: CircuitBreaker;
  /** Redis's clock minus ours, in ms, as last seen (low by the reply's travel time: deadlines err early). */
  #offsetMs: number | undefined;

  constructor(options: RedisRateLimiterOptions) {
    this.#prefix = options.prefix ?? 'petstore:rate:';
    this.#redis = new Redis(options.url, {
      // Fail fast while Redis is away (no queueing, no retries per command); reconnect in the background.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (times) => Math.min(times * 200, 2000),
      // A command without an answer when the connection dropped was given up by its request: never resent.
      autoResendUnfulfilledCommands: false,
    });
    this.#redis.on('error', () => undefined);
    // Learns Redis's clock on each connection, so even the first command carries a deadline.
    this.#redis.on('ready', () => this.#readClock().catch(() => undefined));
    this.#redis.defineCommand('petstoreTake', { numberOfKeys: 1, lua: TAKE });
    this.#breaker = new CircuitBreaker(() => this.#readClock(), PROBE_EVERY_MS);
  }

  async take(bucket: string, rate: Rate, cost: number): Promise<Decision> {
    const open = this.#breaker.refusal();
    if (open !== undefined) return { outcome: 'unknown', error: open.error };
    const deadline = this.#offsetMs === undefined ? 0 : Date.now() + this.#offsetMs + COMMAND_TIMEOUT_MS;
    let answer: [number, string, number];
    try {
      answer = await (this.#redis as unknown as TakeCommand).petstoreTake(
        this.#prefix + bucket,
        rate.perSecond,
        rate.burst,
        cost,
        Math.ceil(deadline),
      );
    } catch (error) {
      this.#breaker.failed(error);
      return { outcome: 'unknown', error };
    }
    const [allowed, tokens, redisMs] = answer;
    this.#learnClock(redisMs);
    // Expired while we still waited: Redis ran it at the time-out, or our idea of its clock was off (now
    // corrected). Either way it took nothing.
    if (allowed === EXPIRED) return { outcome: 'unknown', error: new Error('Redis ran the take past its deadline') };
    return { outcome: allowed === 1 ? 'allowed' : 'refused', tokens: Number(tokens) };
  }

  async #readClock(): Promise<void> {
    const [seconds, micros] = await this.#redis.time();
    this.#learnClock(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
  }

  #learnClock(redisMs: number): void {
    if (Number.isFinite(redisMs)) this.#offsetMs = redisMs - Date.now();
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
    this.#breaker.dispose();
    this.#redis.disconnect();
  }
}
