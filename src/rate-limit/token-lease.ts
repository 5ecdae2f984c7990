import { type BucketState, type Rate, refill } from '../domain/token-bucket.js';
import type { Decision } from './rate-limiter.js';

/** A lease holds about this long of the key's recent rate here: Redis calls per request ≈ 1 / (rate × this). */
const LEASE_SECONDS = 0.25;
/** Nor more than this share of the burst, so one instance cannot hold what the others need. */
const BURST_SHARE = 0.1;
/** Once the bucket is dry, the next call waits until it holds this long of refill (or the lease wanted). */
const DRY_WAIT_SECONDS = 0.05;
/** How long a lease may be spent, from when it was asked for; Redis keeps it as held this long too. */
export const LEASE_TTL_MS = 1000;

/** What a lease call asks for, how much of it is spent at once, and the unspent tokens it gives back. */
export interface LeaseRequest {
  readonly want: number;
  readonly need: number;
  readonly back: number;
}

/**
 * One key's tokens leased from the shared bucket, spent here without asking Redis. All times are this
 * process's milliseconds; Redis's clock only ever runs the shared bucket. What this instance knows of the
 * shared bucket is its last answer, as the formula's BucketState on this clock: refilled by the same
 * formula (domain/token-bucket.ts), it is the estimate a decision reports and what says when a dry bucket
 * is worth another call.
 */
export class TokenLease {
  readonly rate: Rate;
  /** Tokens leased and not yet spent. */
  #held = 0;
  /** The lease may be spent until then (none before the first answer). */
  #expiresAt = 0;
  /** The shared bucket as its last answer said (at: seconds on this clock); none before the first. */
  #shared: BucketState | undefined;
  /** The shared bucket as the last call that found it dry left it, and the tokens the next call waits for. */
  #dry: { readonly bucket: BucketState; readonly target: number } | undefined;
  /** Tokens asked for here since the last call was sent (then), which sizes the next lease. */
  #demand = 0;
  #since: number | undefined;
  #usedAt: number;

  constructor(rate: Rate, now: number) {
    this.rate = rate;
    this.#usedAt = now;
  }

  /** Counts a request's tokens once, however many times it has to wait for a lease. */
  ask(cost: number, now: number): void {
    this.#demand += cost;
    this.#usedAt = now;
  }

  /** The decision the lease alone can give, or undefined when only a call to Redis can tell. */
  decide(cost: number, now: number): Decision | undefined {
    if (now < this.#expiresAt && this.#held >= cost) {
      this.#held -= cost;
      return { outcome: 'allowed', tokens: this.#estimate(now) };
    }
    if (this.#dry === undefined) return undefined;
    const refilled = refill(this.#dry.bucket, now / 1000, this.rate);
    if (refilled >= this.#dry.target) return undefined;
    // Retry-After then says when this instance asks again (the tokens it still waits for), never earlier
    // than the bucket could answer.
    const waitTokens = this.#dry.target - refilled;
    return { outcome: 'refused', tokens: Math.max(0, Math.min(this.#estimate(now), 1 - waitTokens)) };
  }

  /**
   * The next call, for `need` tokens (the requests waiting on it): the lease it wants, sized by the recent
   * demand here, and whatever is left of the lease it replaces, given back.
   */
  request(need: number, now: number): LeaseRequest {
    const cap = Math.max(1, Math.floor(Math.min(this.rate.perSecond * LEASE_SECONDS, this.rate.burst * BURST_SHARE)));
    // Per second, over the time since the last call: no history, no more than the requests need.
    const recent = this.#since === undefined ? 0 : (this.#demand * 1000) / Math.max(1, now - this.#since);
    const want = need === 0 ? 0 : Math.max(need, Math.min(cap, Math.ceil(recent * LEASE_SECONDS)));
    const back = this.#held;
    this.#held = 0;
    this.#demand = 0;
    this.#since = now;
    return { want, need, back };
  }

  /** Takes in the answer to a call sent at `sentAt`. */
  settle(asked: LeaseRequest, granted: number, tokens: number, sentAt: number, now: number): void {
    this.#held += granted;
    this.#expiresAt = sentAt + LEASE_TTL_MS;
    this.#shared = { tokens, at: now / 1000 };
    if (granted >= asked.want) return;
    // The bucket held less than one more token: none until it refills to what is worth a call, which a
    // full bucket is, whatever the lease wanted.
    const target = Math.max(1, Math.min(asked.want, this.rate.perSecond * DRY_WAIT_SECONDS));
    this.#dry = { bucket: this.#shared, target: Math.min(this.rate.burst, target) };
  }

  /** Tokens of an expired lease, to give back to the shared bucket. */
  unspent(now: number): number {
    return now >= this.#expiresAt ? this.#held : 0;
  }

  /** Nothing held and unused for a lease's lifetime: the key can be forgotten (Redis has the truth). */
  idle(now: number): boolean {
    return this.#held === 0 && now - this.#usedAt > LEASE_TTL_MS;
  }

  /** The bucket as this instance sees it: the shared one refilled since it last answered, plus the lease. */
  #estimate(now: number): number {
    return Math.min(this.rate.burst, refill(this.#shared, now / 1000, this.rate) + this.#held);
  }
}
