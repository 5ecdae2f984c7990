import type { FastifyBaseLogger } from 'fastify';
import { COUNTED_WINDOW_MS, MOVED_AFTER_MS, type StartGrant } from '../domain/start-window.js';
import type { Metrics } from '../observability/metrics.js';
import type { DueDelivery, HeldBackDelivery } from '../store/records.js';
import type { EndpointStartStore } from '../store/store.js';
import type { StartLimiter } from './start-limiter.js';

/** A claimed delivery the gate let through, with the time its start was logged at: its attempt's time. */
export interface PassedDelivery {
  readonly delivery: DueDelivery;
  readonly startedAt: Date;
  /** To be told when its request is written (ms, epoch): a late one moves its batch's start (moveStarts). */
  readonly sent: (at: number) => void;
}

export interface StartGateOptions {
  readonly limiter: StartLimiter;
  readonly starts: Pick<EndpointStartStore, 'holdBack'>;
  readonly log: FastifyBaseLogger;
  readonly metrics: Metrics;
  /** Called when an endpoint held back here may start again: the dispatcher claims. */
  readonly free: () => void;
}

/**
 * Endpoints' rate limits (docs/decisions/endpoint-rate-limit.md), consulted as the dispatcher is about to
 * start what it claimed for limited endpoints: what the limit allows starts now; the rest is given back to
 * the store unattempted (no attempt counted, health untouched), due again when a start is free, and this
 * process's claims pass over that endpoint until then, so its backlog takes no slot and no claim from the
 * others. The limiter is shared by every instance (Redis, else the database); while it cannot answer, the
 * deliveries wait a window and try again: the limit holds rather than the receiver being flooded.
 */
export class StartGate {
  readonly #options: StartGateOptions;
  /** Endpoints at their limit as far as this process knows: until when, and the timer that wakes a claim then. */
  readonly #blocked = new Map<number, { readonly until: number; readonly timer: NodeJS.Timeout }>();
  /** The limiter is failing: logged once when it starts and once when it ends. */
  #failing = false;

  constructor(options: StartGateOptions) {
    this.#options = options;
  }

  /** The endpoints a claim at `now` takes nothing of: they may start no attempt yet. */
  blocked(now: number): number[] {
    for (const [id, { until, timer }] of this.#blocked) {
      if (until > now) continue;
      clearTimeout(timer);
      this.#blocked.delete(id);
    }
    return [...this.#blocked.keys()];
  }

  /**
   * Of deliveries claimed for limited endpoints (in the claim's order, oldest due first), hands `begin` those
   * that may start now, each endpoint's as soon as its own limit answers (a start is counted from the time of
   * its grant: waiting for another endpoint's answer would make it late); then holds back the rest, each due
   * when the limit should have a start free for it.
   */
  async pass(limited: readonly DueDelivery[], begin: (passed: PassedDelivery[]) => void): Promise<void> {
    const byEndpoint = new Map<number, DueDelivery[]>();
    for (const delivery of limited) {
      const group = byEndpoint.get(delivery.endpoint.id);
      if (group === undefined) byEndpoint.set(delivery.endpoint.id, [delivery]);
      else group.push(delivery);
    }
    const held = await Promise.all(
      [...byEndpoint.values()].map(async (group) => {
        const answer = await this.#passEndpoint(group);
        begin(answer.passed);
        return answer.held;
      }),
    );
    await this.#holdBack(held.flat());
  }

  /** Stops the timers of endpoints held back. */
  stop(): void {
    for (const { timer } of this.#blocked.values()) clearTimeout(timer);
    this.#blocked.clear();
  }

  /** Gives what the limits refused back to the store, unattempted; should that fail, it waits for its lease. */
  async #holdBack(held: readonly HeldBackDelivery[]): Promise<void> {
    if (held.length === 0) return;
    this.#options.metrics.webhookDeliveriesRateLimited.inc(held.length);
    await this.#options.starts.holdBack(held).catch((error: unknown) => {
      this.#options.log.warn({ err: error }, 'holding back rate-limited deliveries failed; they wait for their lease');
    });
  }

  async #passEndpoint(deliveries: DueDelivery[]) {
    const { id, rateLimit } = (deliveries[0] as DueDelivery).endpoint;
    const grant = await this.#take(id, rateLimit ?? Number.POSITIVE_INFINITY, deliveries.length);
    const startedAt = new Date(grant.at);
    const sent = this.#movesOf(id, grant);
    const passed = deliveries.slice(0, grant.granted).map((delivery) => ({ delivery, startedAt, sent }));
    const held: HeldBackDelivery[] = deliveries
      .slice(grant.granted)
      .map((delivery, i) => ({ delivery, until: new Date(grant.retryAt[i] ?? grant.at + COUNTED_WINDOW_MS) }));
    if (held.length > 0) this.#block(id, Math.min(...held.map(({ until }) => until.getTime())));
    return { passed, held };
  }

  /**
   * What moves a grant's batch once its requests are written later than MOVED_AFTER_MS after it: to the
   * latest such time, one move at a time, each from where the last one put it. After a failure it moves
   * no more (the batch counts from where it was, as it would have without).
   */
  #movesOf(id: number, grant: StartGrant): (at: number) => void {
    let logged = grant.at;
    let latest = grant.at;
    let moving = false;
    let failed = false;
    const move = (): void => {
      moving = true;
      const to = latest;
      this.#options.limiter
        .made(id, grant, logged, to)
        .then(
          () => {
            logged = to;
          },
          (error: unknown) => {
            failed = true;
            this.#options.log.debug({ err: error }, 'moving a rate-limited start to when it was sent failed');
          },
        )
        .finally(() => {
          moving = false;
          if (!failed && latest > logged) move();
        });
    };
    return (at) => {
      if (at - grant.at <= MOVED_AFTER_MS || at <= latest) return;
      latest = at;
      if (!moving && !failed) move();
    };
  }

  async #take(id: number, limit: number, wanted: number): Promise<StartGrant> {
    try {
      const grant = await this.#options.limiter.take(id, limit, wanted);
      if (this.#failing) this.#options.log.info('rate limits of webhook endpoints work again');
      this.#failing = false;
      return grant;
    } catch (error) {
      if (!this.#failing)
        this.#options.log.warn({ err: error }, 'rate limits of webhook endpoints failed; limited deliveries wait');
      this.#failing = true;
      const retry = Date.now() + COUNTED_WINDOW_MS;
      return { granted: 0, at: Date.now(), retryAt: Array.from({ length: wanted }, () => retry) };
    }
  }

  #block(id: number, until: number): void {
    clearTimeout(this.#blocked.get(id)?.timer);
    const timer = setTimeout(
      () => {
        if (this.#blocked.get(id)?.timer === timer) this.#blocked.delete(id);
        this.#options.free();
      },
      Math.max(0, until - Date.now()),
    );
    timer.unref();
    this.#blocked.set(id, { until, timer });
  }
}
