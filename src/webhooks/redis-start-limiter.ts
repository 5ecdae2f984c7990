import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { COUNTED_WINDOW_MS, KEPT_MS, type StartGrant, takeStarts } from '../domain/start-window.js';
import type { RedisStartLimits, StartLimiter } from './start-limiter.js';

/**
 * takeStarts' log in a sorted set per endpoint, run atomically in Redis: each grant is a member
 * "<count>:<instance>:<n>" scored by its time in ms. The script drops what the log no longer keeps, counts
 * what is in the window, adds the grant, and answers with how many it granted and the log as it found it, from which the
 * caller computes the same grant (and the retry times) with takeStarts. The time is the caller's, as the
 * database's limits and the deliveries' leases use: instances' clocks must agree.
 */
const TAKE = `
local limit = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local kept = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - kept)
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local used = 0
for i = 1, #entries, 2 do
  if tonumber(entries[i + 1]) > now - window then
    used = used + tonumber(string.match(entries[i], '^(%d+):'))
  end
end
local granted = math.max(0, math.min(wanted, limit - used))
if granted > 0 then
  redis.call('ZADD', KEYS[1], now, granted .. ':' .. ARGV[6])
  redis.call('PEXPIRE', KEYS[1], kept + window)
end
return { granted, entries }
`;

/** moveStarts' mirror: a grant's member scored later, never earlier, while it is kept. */
const MADE = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
return 0
`;

/** A command unanswered this long fails: the gate holds the deliveries back and tries again later. */
const COMMAND_TIMEOUT_MS = 1000;

interface StartCommands {
  petstoreTakeStarts(key: string, ...args: Array<string | number>): Promise<[number, string[]]>;
  petstoreMadeStarts(key: string, member: string, madeAt: number): Promise<number>;
}

/**
 * Endpoints' rate limits in Redis (REDIS_URL): one limit across every instance using that Redis. Connects
 * on the first take, so a service with no limited endpoint holds no connection for it.
 */
export class RedisStartLimiter implements StartLimiter {
  readonly #options: RedisStartLimits;
  #redis: Redis | undefined;
  /** Makes each grant's member unique: this process's id and a count. */
  readonly #instance = randomBytes(6).toString('hex');
  #grants = 0;
  /** The member each grant was logged as, to move it once its starts are made. */
  readonly #members = new WeakMap<StartGrant, string>();

  constructor(options: RedisStartLimits) {
    this.#options = options;
  }

  #connection(): Redis {
    if (this.#redis !== undefined) return this.#redis;
    const redis = new Redis(this.#options.url, {
      // Fail fast while Redis is away; the deliveries wait, and reconnecting goes on in the background.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    redis.on('error', () => undefined);
    redis.defineCommand('petstoreTakeStarts', { numberOfKeys: 1, lua: TAKE });
    redis.defineCommand('petstoreMadeStarts', { numberOfKeys: 1, lua: MADE });
    this.#redis = redis;
    return redis;
  }

  async take(endpointId: number, limit: number, wanted: number): Promise<StartGrant> {
    const member = `${this.#instance}:${++this.#grants}`;
    const redis = this.#connection();
    // The first take waits for the connection, a bounded time: past it, the gate holds the deliveries back.
    if (redis.status !== 'ready') await once(redis, 'ready', { signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS) });
    // The time is read once connected: a start is counted from it, and the request must follow it closely.
    const now = Date.now();
    const [granted, entries] = await (redis as unknown as StartCommands).petstoreTakeStarts(
      this.#key(endpointId),
      limit,
      wanted,
      now,
      COUNTED_WINDOW_MS,
      KEPT_MS,
      member,
    );
    const log: Array<[number, number]> = [];
    for (let i = 0; i + 1 < entries.length; i += 2) {
      log.push([Number(entries[i + 1]), Number.parseInt(entries[i] ?? '0', 10)]);
    }
    // The same log and time give the same count; the script's is the one recorded, so it is the one answered.
    const { retryAt } = takeStarts(log, limit, wanted, now).grant;
    const refused = Array.from({ length: wanted - granted }, (_, i) => retryAt[i] ?? now + COUNTED_WINDOW_MS);
    const grant = { granted, at: now, retryAt: refused };
    this.#members.set(grant, `${granted}:${member}`);
    return grant;
  }

  async made(endpointId: number, grant: StartGrant, _from: number, madeAt: number): Promise<void> {
    const member = this.#members.get(grant);
    if (member === undefined || this.#redis?.status !== 'ready') return;
    await (this.#redis as unknown as StartCommands).petstoreMadeStarts(this.#key(endpointId), member, madeAt);
  }

  #key(endpointId: number): string {
    return (this.#options.keyPrefix ?? 'petstore:starts:') + endpointId;
  }

  close(): void {
    this.#redis?.disconnect();
  }
}
