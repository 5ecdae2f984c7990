import type { Rate } from '../domain/token-bucket.js';
import type { Decision, RateLimiter } from './rate-limiter.js';
import { RedisBuckets } from './redis-buckets.js';
import { LEASE_TTL_MS, TokenLease } from './token-lease.js';

/** How often leases past their time are given back and idle keys forgotten. */
const SWEEP_EVERY_MS = LEASE_TTL_MS / 2;

/** One call to Redis for a key: the tokens the requests waiting on it need, until it is sent. */
interface Call {
  need: number;
  sent: boolean;
  /** Resolves when the answer is in: to why there is none, or undefined. */
  readonly done: Promise<{ readonly error: unknown } | undefined>;
}

interface Entry {
  readonly lease: TokenLease;
  /** At most one call per key at a time: requests that need a lease meanwhile wait for its answer. */
  call: Call | undefined;
}

export interface RedisRateLimiterOptions {
  readonly url: string;
  /** Namespace of the keys, so several deployments (or test runs) can share one Redis. */
  readonly prefix?: string;
  /**
   * This process's clock in milliseconds (performance.now by default). Given, the shared buckets run on it
   * too instead of on Redis's clock, so a test can put takes at chosen times
   * (test/http/rate-limit-formula.test.ts).
   */
  readonly clock?: (() => number) | undefined;
}

/**
 * Shared buckets, spent through leases: a key's requests take tokens from a lease this instance holds, and
 * only when it runs out does one call to Redis (shared by the requests of that event-loop turn) lease
 * more, sized by the key's recent rate here. Unspent tokens go back to Redis when the lease expires.
 * If Redis is down or hung the service keeps serving: every take answers `unknown`, and the leases held
 * are dropped with the connection (Redis counts them as held until they expire).
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #buckets: RedisBuckets;
  readonly #entries = new Map<string, Entry>();
  readonly #sweep: NodeJS.Timeout;
  readonly #now: () => number;

  constructor(options: RedisRateLimiterOptions) {
    this.#now = options.clock ?? (() => performance.now());
    this.#buckets = new RedisBuckets({ ...options, leaseTtlMs: LEASE_TTL_MS }, () => this.#entries.clear());
    this.#sweep = setInterval(() => this.#giveBack(false), SWEEP_EVERY_MS);
    this.#sweep.unref();
  }

  async take(bucket: string, rate: Rate, cost: number): Promise<Decision> {
    const down = this.#buckets.unavailable();
    if (down !== undefined) return { outcome: 'unknown', error: down.error };
    let entry = this.#entries.get(bucket);
    if (entry === undefined) {
      entry = { lease: new TokenLease(rate, this.#now()), call: undefined };
      this.#entries.set(bucket, entry);
    }
    entry.lease.ask(cost, this.#now());
    for (;;) {
      const decision = entry.lease.decide(cost, this.#now());
      if (decision !== undefined) return decision;
      const failure = await this.#join(bucket, entry, cost);
      if (failure !== undefined) return { outcome: 'unknown', error: failure.error };
    }
  }

  /** Waits for the key's call in flight, or joins (or starts) the call of this event-loop turn. */
  #join(bucket: string, entry: Entry, cost: number): Call['done'] {
    if (entry.call !== undefined) {
      if (!entry.call.sent) entry.call.need += cost;
      return entry.call.done;
    }
    return this.#call(bucket, entry, cost, true).done;
  }

  /** A call for `need` tokens, sent now or, to gather the rest of this turn's requests, once it ends. */
  #call(bucket: string, entry: Entry, need: number, gather: boolean): Call {
    let send = () => {};
    const call: Call = {
      need,
      sent: false,
      done: new Promise((resolve) => {
        send = () => resolve(this.#send(bucket, entry, call));
      }),
    };
    entry.call = call;
    if (gather) setImmediate(send);
    else send();
    return call;
  }

  async #send(bucket: string, entry: Entry, call: Call): Promise<{ readonly error: unknown } | undefined> {
    call.sent = true;
    const sentAt = this.#now();
    const asked = entry.lease.request(call.need, sentAt);
    const answer = await this.#buckets.lease(bucket, entry.lease.rate, asked);
    entry.call = undefined;
    if ('error' in answer) return answer;
    entry.lease.settle(asked, answer.granted, answer.tokens, sentAt, this.#now());
    return undefined;
  }

  /** Gives back what expired leases (or, on close, all leases) still hold; forgets idle keys. */
  #giveBack(all: boolean): Promise<unknown> {
    const now = this.#now();
    const calls: Array<Call['done']> = [];
    for (const [bucket, entry] of this.#entries) {
      if (entry.call !== undefined) continue;
      if (entry.lease.unspent(all ? Number.POSITIVE_INFINITY : now) > 0) {
        calls.push(this.#call(bucket, entry, 0, false).done);
      } else if (entry.lease.idle(now)) {
        this.#entries.delete(bucket);
      }
    }
    return Promise.all(calls);
  }

  ready(): Promise<void> {
    return this.#buckets.ready();
  }

  /** Gives the leases back first, so a restart (a deploy) does not cost the fleet what this one held. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    if (this.#buckets.unavailable() === undefined) await this.#giveBack(true);
    this.#buckets.close();
  }
}
