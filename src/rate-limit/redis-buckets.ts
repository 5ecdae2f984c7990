import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Rate } from '../domain/token-bucket.js';
import { answerWithin } from './answer-timeout.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { LeaseRequest } from './token-lease.js';

/**
 * The token bucket of src/domain/token-bucket.ts, mirrored in Lua and run atomically in Redis on Redis's
 * own clock: the hash keeps the formula's BucketState (`tokens`, `at` in seconds, written with all 17
 * digits so it reads back as the same number), and the script refills and takes as takeTokens does
 * (test/http/rate-limit-formula.test.ts holds the two to the same answers). On top of the formula it hands
 * out leases: up to ARGV[3] whole tokens taken at once (never more than the bucket holds), of which the
 * first ARGV[4] are spent as soon as the answer arrives (the requests waiting for it), and ARGV[5] unspent
 * tokens given back. What the instance keeps for later is recorded in the bucket's hash until it expires
 * (`lease:<instance>` = "tokens:expires ms"), and the bucket refills only up to the burst less the leases
 * held, so the bucket and every lease together never hold more than the burst. Asking again settles the
 * instance's previous lease (spent, apart from what it gives back); a pure read (nothing asked, nothing
 * given back) changes nothing. ARGV[6] is a deadline in Redis's milliseconds (0: none): a command Redis
 * runs after its sender gave it up (Redis paused, then running its backlog) changes nothing. Every answer
 * carries Redis's time, which is how the sender learns the deadline to send. ARGV[9], when given, is the
 * time in seconds to run on instead of Redis's (RedisBucketsOptions.clock).
 */
const LEASE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local need = tonumber(ARGV[4])
local back = tonumber(ARGV[5])
local deadline = tonumber(ARGV[6])
local mine = 'lease:' .. ARGV[7]
local ttl = tonumber(ARGV[8])
local now, ms
if ARGV[9] then
  now = tonumber(ARGV[9])
  ms = math.floor(now * 1000)
else
  local time = redis.call('TIME')
  ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  now = tonumber(time[1]) + tonumber(time[2]) / 1000000
end
if deadline > 0 and ms > deadline then
  return { -1, '0', ms }
end
local settles = want > 0 or back > 0
local fields = redis.call('HGETALL', KEYS[1])
local tokens, at, held, expired, hadMine, mineHeld = burst, now, 0, {}, false, 0
for i = 1, #fields, 2 do
  local name, value = fields[i], fields[i + 1]
  if name == 'tokens' then
    tokens = tonumber(value)
  elseif name == 'at' then
    at = tonumber(value)
  elseif string.sub(name, 1, 6) == 'lease:' then
    local amount, expires = string.match(value, '^(%d+):(%d+)$')
    if name == mine and settles then
      hadMine = true
      if tonumber(expires) > ms then
        mineHeld = tonumber(amount)
      end
    elseif tonumber(expires) <= ms then
      expired[#expired + 1] = name
    else
      held = held + tonumber(amount)
    end
  end
end
-- refill: up to now, at most the burst (less the leases held, this instance's included until settled).
tokens = math.min(burst - held - mineHeld, tokens + (now - at) * rate)
tokens = math.max(0, math.min(burst - held, tokens + back))
-- takeTokens: whole tokens, as many as asked for and there.
local granted = math.max(0, math.min(want, math.floor(tokens)))
tokens = tokens - granted
local kept = granted - math.min(granted, need)
local exact = '%.17g'
if settles then
  if hadMine and kept == 0 then
    expired[#expired + 1] = mine
  end
  if #expired > 0 then
    redis.call('HDEL', KEYS[1], unpack(expired))
  end
  local update = { 'tokens', string.format(exact, tokens), 'at', string.format(exact, now) }
  if kept > 0 then
    update[5] = mine
    update[6] = kept .. ':' .. (ms + ttl)
  end
  redis.call('HSET', KEYS[1], unpack(update))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + ttl + 1000)
end
return { granted, string.format(exact, tokens), ms }
`;

/** How long a start waits for Redis before serving with limits failing open. */
const READY_WAIT_MS = 2000;
/** A local Redis answers in well under a millisecond: past this it is hung or unreachable. */
const COMMAND_TIMEOUT_MS = 250;
/**
 * ioredis's own time-out, which a stalled event loop trips (see answerWithin): only there so that a hung
 * Redis does not keep the commands given up on queued for ever.
 */
const COMMAND_BACKSTOP_MS = 10 * COMMAND_TIMEOUT_MS;
/** An answer slower than this says too little about Redis's clock to correct what was learnt before. */
const CLOCK_SAMPLE_MS = 50;
/** After a failure, how often Redis is probed (in the background) before commands are sent again. */
const PROBE_EVERY_MS = 500;
/** What the script answers for a command past its deadline. */
const EXPIRED = -1;

/** The script, as ioredis defines it on the client: [tokens granted, or -1 expired; tokens left; Redis ms]. */
interface LeaseCommand {
  petstoreLease(key: string, ...args: Array<string | number>): Promise<[number, string, number]>;
}

/** A lease call's answer: tokens granted and what the shared bucket holds after it, or why there is none. */
export type LeaseAnswer = { readonly granted: number; readonly tokens: number } | { readonly error: unknown };

export interface RedisBucketsOptions {
  readonly url: string;
  /** Namespace of the keys, so several deployments (or test runs) can share one Redis. */
  readonly prefix?: string;
  /** How long Redis counts a lease as held by this instance, from when it granted it. */
  readonly leaseTtlMs: number;
  /** Milliseconds to run the buckets on instead of Redis's clock, with no deadline (for tests). */
  readonly clock?: (() => number) | undefined;
}

/**
 * The shared buckets in Redis, one script call per lease. If Redis is down or hung, calls fail fast: one
 * failed command opens a circuit breaker, so a hung Redis costs one time-out, not one per call.
 */
export class RedisBuckets {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #leaseTtlMs: number;
  readonly #clock: (() => number) | undefined;
  /** Names this instance's leases in the buckets. */
  readonly #instance = randomBytes(6).toString('base64url');
  readonly #breaker: CircuitBreaker;
  /** Redis's clock minus ours, in ms, from the last quick answer (low by its travel time: deadlines err early). */
  #offsetMs: number | undefined;

  /** `onDisconnect` is told when the connection drops: what this instance held may be gone with it. */
  constructor(options: RedisBucketsOptions, onDisconnect: () => void) {
    this.#prefix = options.prefix ?? 'petstore:rate:';
    this.#leaseTtlMs = options.leaseTtlMs;
    this.#clock = options.clock;
    this.#redis = new Redis(options.url, {
      // Fail fast while Redis is away (no queueing, no retries per command); reconnect in the background.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: COMMAND_BACKSTOP_MS,
      retryStrategy: (times) => Math.min(times * 200, 2000),
      // A command without an answer when the connection dropped was given up by its request: never resent.
      autoResendUnfulfilledCommands: false,
    });
    this.#redis.on('error', () => undefined);
    this.#redis.on('close', onDisconnect);
    // Learns Redis's clock on each connection, so even the first command carries a deadline.
    this.#redis.on('ready', () => this.#readClock().catch(() => undefined));
    this.#redis.defineCommand('petstoreLease', { numberOfKeys: 1, lua: LEASE });
    this.#breaker = new CircuitBreaker(() => this.#readClock(), PROBE_EVERY_MS);
  }

  /** Why no call can be made now (the breaker is open, or there is no connection), or undefined. */
  unavailable(): { readonly error: unknown } | undefined {
    const open = this.#breaker.refusal();
    if (open !== undefined) return open;
    if (this.#redis.status !== 'ready') return { error: new Error(`Redis connection ${this.#redis.status}`) };
    return undefined;
  }

  /** Asks the bucket for a lease (as much of it as the bucket holds) and gives back the unspent tokens. */
  async lease(bucket: string, rate: Rate, { want, need, back }: LeaseRequest): Promise<LeaseAnswer> {
    const down = this.unavailable();
    if (down !== undefined) return down;
    const sentAt = Date.now();
    const deadline = this.#offsetMs === undefined ? 0 : sentAt + this.#offsetMs + COMMAND_TIMEOUT_MS;
    const clock = this.#clock;
    // On a given clock there is no deadline: the script runs at the time it is sent with, however late.
    const args: Array<number | string> = [rate.perSecond, rate.burst, want, need, back];
    args.push(clock === undefined ? Math.ceil(deadline) : 0, this.#instance, this.#leaseTtlMs);
    if (clock !== undefined) args.push(String(clock() / 1000));
    let answer: [number, string, number];
    try {
      answer = await this.#timed(
        (this.#redis as unknown as LeaseCommand).petstoreLease(this.#prefix + bucket, ...args),
      );
    } catch (error) {
      this.#breaker.failed(error);
      return { error };
    }
    const [granted, tokens, redisMs] = answer;
    this.#learnClock(redisMs, sentAt);
    // Expired while we still waited: Redis ran it at the time-out, or our idea of its clock was off (now
    // corrected). Either way it changed nothing.
    if (granted === EXPIRED) return { error: new Error('Redis ran the lease past its deadline') };
    return { granted, tokens: Number(tokens) };
  }

  /** A command's answer, or a time-out once COMMAND_TIMEOUT_MS pass without it. */
  #timed<T>(command: Promise<T>): Promise<T> {
    return answerWithin(
      command,
      COMMAND_TIMEOUT_MS,
      () => new Error(`Redis did not answer in ${COMMAND_TIMEOUT_MS} ms`),
    );
  }

  async #readClock(): Promise<void> {
    const sentAt = Date.now();
    const [seconds, micros] = await this.#timed(this.#redis.time());
    this.#learnClock(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), sentAt);
  }

  /**
   * Redis's time was read between `sentAt` and now. An answer read long after it came (a stalled event loop)
   * would put Redis's clock that far behind, and the next deadline would pass before its command ran.
   */
  #learnClock(redisMs: number, sentAt: number): void {
    const now = Date.now();
    if (!Number.isFinite(redisMs)) return;
    if (this.#offsetMs === undefined || now - sentAt <= CLOCK_SAMPLE_MS) this.#offsetMs = redisMs - now;
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

  close(): void {
    this.#breaker.dispose();
    this.#redis.disconnect();
  }
}
