import { setTimeout as sleep } from 'node:timers/promises';
import { bareDeliveries } from './bare-deliveries.js';
import type { Cleanup } from './cleanup.js';
import type { LoadResult } from './load.js';
import type { Service } from './service.js';
import { cpuSecondsOf } from './usage.js';
import type { ReceiverProcess, ReceiverStats } from './webhook-receiver.js';

/**
 * The deliveries of a load are waited for as long as they keep arriving: given up once none arrived for this
 * long (the service is stuck, not slow). A fixed deadline gave up on a slow but steady drain while the
 * service went on sending, and the scenario's log never settled.
 */
export const STALL_MS = 30_000;
/** Seconds the bare client posts to the receiver (bareDeliveries), once the service's deliveries are in. */
const BARE_SECONDS = 3;
/**
 * Once the deliveries counted arrived, the receiver must stay quiet this long before the service is asked
 * whether any are pending: creates still in flight when the load generator stopped commit (and are
 * delivered) though it counted none of them. Above the dispatcher's 500 ms poll.
 */
const QUIET_MS = 1000;
const POLL_MS = 50;

/** What a scenario with a webhook endpoint subscribed measured of the deliveries (Measured.webhooks). */
export interface WebhookFigures {
  /**
   * Creates the service answered 2xx, by its request log. Each must reach the receiver once, and so do the
   * creates the load generator cut off when it stopped, which commit but are not logged (at most one a
   * connection).
   */
  readonly created: number;
  readonly deliveries: number;
  /** Distinct webhook-id values among the deliveries (fewer: some were sent twice). */
  readonly distinctIds: number;
  /** Deliveries that arrived while the load ran, per second of it. */
  readonly perSecondDuringLoad: number;
  /** All deliveries, per second from the load's start until the last arrived (or the load ended). */
  readonly perSecondUntilDrained: number;
  /**
   * Deliveries that arrived after the load stopped, per second from its end to the last one: the backlog
   * drained by a service no request keeps busy; null when none arrived after it.
   */
  readonly perSecondAfterLoad: number | null;
  /**
   * A bare node:http client's requests per second to the same receiver, with as many in flight as the
   * service sends one endpoint (bare-deliveries.ts): what perSecondAfterLoad is held against.
   */
  readonly bareClientPerSecond: number | null;
  /**
   * The service's CPU time (user + system) from the end of the load until drained, per delivery that
   * arrived after it, in µs: what the drain costs, whatever else the machine runs; null as above.
   */
  readonly cpuUsPerDeliveryAfterLoad: number | null;
  /** Arrival − the event's timestamp (when the change was recorded, just before its commit). */
  readonly lagP50Ms: number | null;
  readonly lagP99Ms: number | null;
  readonly lagMaxMs: number | null;
  /** From the end of the load to the last delivery; 0 when none arrived after it. */
  readonly drainMs: number;
  /** False when the service still had deliveries pending once none had arrived for STALL_MS. */
  readonly drained: boolean;
}

/** When the measured load ran, by Date.now() (the receiver's clock). */
export interface LoadWindow {
  readonly started: number;
  readonly ended: number;
}

/** Creates a load generator saw succeed. */
const succeeded = (load: LoadResult) => load.requests - load.errorResponses;

/** The service's count of webhook deliveries not yet sent. */
type Pending = () => Promise<number>;

/**
 * Waits until `expected` deliveries arrived, the receiver has been quiet and the service has none pending,
 * or none arrived for STALL_MS; `countUntil` in the stats counts those that arrived until `until`.
 */
async function untilDelivered(
  receiver: ReceiverProcess,
  pending: Pending,
  expected: number,
  until?: number,
): Promise<{ stats: ReceiverStats; drained: boolean }> {
  const waitingSince = Date.now();
  for (;;) {
    const stats = await receiver.stats(until);
    // The service is asked last, and seldom: its /metrics costs it a query.
    const quiet = stats.count >= expected && Date.now() - (stats.lastArrival ?? 0) >= QUIET_MS;
    if (quiet && (await pending()) === 0) return { stats, drained: true };
    if (Date.now() - Math.max(waitingSince, stats.lastArrival ?? 0) > STALL_MS) return { stats, drained: false };
    await sleep(quiet ? QUIET_MS : POLL_MS);
  }
}

/**
 * One webhook endpoint registered with the service for the scenario, pointing to the receiver: opened
 * before the warm-up (so the delivery code is warmed up too), closed (DELETE) after the scenario, so that
 * later scenarios send nothing.
 */
export class WebhookSubscription {
  readonly #receiver: ReceiverProcess;
  readonly #pending: Pending;
  readonly #processes: () => number[];
  /** Removes the endpoint and its pending deliveries (at cleanup, if the scenario did not get there). */
  readonly close: () => Promise<void>;

  private constructor(service: Service, receiver: ReceiverProcess, close: () => Promise<void>) {
    this.#receiver = receiver;
    this.#pending = () => service.pendingDeliveries();
    this.#processes = () => service.processes();
    this.close = close;
  }

  static async open(
    receiver: ReceiverProcess,
    service: Service,
    headers: Readonly<Record<string, string>>,
    events: readonly string[],
    cleanup: Cleanup,
  ): Promise<WebhookSubscription> {
    await receiver.reset();
    const { origin } = service;
    const response = await fetch(`${origin}/v1/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events, description: 'petstore benchmark' }),
    });
    const body = await response.text();
    if (response.status !== 201) throw new Error(`POST /v1/webhooks answered ${response.status}: ${body}`);
    const url = `${origin}/v1/webhooks/${(JSON.parse(body) as { id: number }).id}`;
    const close = cleanup.defer('the webhook endpoint', async () => {
      const deleted = await fetch(url, { method: 'DELETE', headers });
      if (deleted.status !== 204) throw new Error(`DELETE ${url} answered ${deleted.status}`);
    });
    return new WebhookSubscription(service, receiver, close);
  }

  /** Lets the warm-up's deliveries arrive, then forgets them, so that the receiver counts the measured load only. */
  async afterWarmUp(warmUp: LoadResult | undefined): Promise<void> {
    if (warmUp !== undefined) await untilDelivered(this.#receiver, this.#pending, succeeded(warmUp));
    await this.#receiver.reset();
  }

  /**
   * Waits for the deliveries of `load`, which ran in `window`, then measures the bare client against the
   * receiver; `created` is counted by the caller later.
   */
  async drain(load: LoadResult, window: LoadWindow): Promise<Omit<WebhookFigures, 'created'>> {
    const processes = this.#processes();
    const cpuAtEnd = cpuSecondsOf(processes);
    const { stats, drained } = await untilDelivered(this.#receiver, this.#pending, succeeded(load), window.ended);
    const drainCpu = cpuSecondsOf(processes) - cpuAtEnd;
    const drainedAt = Math.max(stats.lastArrival ?? window.ended, window.ended);
    const afterLoad = stats.count - stats.countUntil;
    const sample = await this.#receiver.sample();
    const bare = sample === null ? null : await bareDeliveries(this.#receiver.url, sample, BARE_SECONDS);
    await this.#receiver.reset();
    return {
      deliveries: stats.count,
      distinctIds: stats.distinctIds,
      perSecondDuringLoad: stats.countUntil / ((window.ended - window.started) / 1000),
      perSecondUntilDrained: stats.count / ((drainedAt - window.started) / 1000),
      perSecondAfterLoad: afterLoad === 0 ? null : afterLoad / ((drainedAt - window.ended) / 1000),
      bareClientPerSecond: bare,
      cpuUsPerDeliveryAfterLoad: afterLoad === 0 ? null : (drainCpu / afterLoad) * 1e6,
      lagP50Ms: stats.lagP50Ms,
      lagP99Ms: stats.lagP99Ms,
      lagMaxMs: stats.lagMaxMs,
      drainMs: drainedAt - window.ended,
      drained,
    };
  }
}
