import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { ClaimQuery, DueDelivery } from '../store/records.js';
import { runAttempt } from './delivery-attempt.js';
import { DeliveryPace, watchEventLoop } from './delivery-pace.js';
import type { DispatcherOptions } from './dispatcher-options.js';
import { EndpointAgents } from './endpoint-agents.js';
import { EndpointSlots } from './endpoint-slots.js';
import { SecretsRead } from './secrets-read.js';
import { type PassedDelivery, StartGate } from './start-gate.js';

/** How often due deliveries are looked for: other instances' events start within this (+ one claim). */
const POLL_MS = 500;
/**
 * Requests in flight per endpoint once it has proven itself (EndpointSlots: it starts at one): at 4, one
 * endpoint answering at once got 200 deliveries/s. Endpoints still below it (new, or failing) share TRIAL.
 */
export const PER_ENDPOINT = 16;
const TRIAL = 256;
/**
 * Deliveries claimed for an endpoint with its full share (EndpointSlots.proven) beyond its free slots: each
 * answer begins the next at once, and its answers ask for a claim only once half of these are gone, so a
 * claim takes a batch. Claiming after every answer, one or two deliveries a claim, held a process with
 * nothing else to do to 0.2× of a bare client's pace against the same receiver.
 */
const AHEAD = 4 * PER_ENDPOINT;
/**
 * Attempts started in the last SLOW_MS (with their recording), in all: the work the process does at once.
 * An attempt still waiting for its answer after SLOW_MS no longer counts here (it holds a socket and a
 * timer, no work), so endpoints that hang cannot fill the process: they hold only their own slots. An
 * endpoint's first attempt here counts only until its request is written: with 1,000 new endpoints that
 * never answered, the process started 64 of them per SLOW_MS, and a healthy one registered after them
 * waited 8 s for its turn (docs/decisions/hanging-endpoint-crowd.md).
 */
const IN_FLIGHT = 64;
const SLOW_MS = 500;
/**
 * Attempts waiting longer than SLOW_MS, together, past which endpoints known to hang get no new attempt
 * (EndpointSlots): the sockets a crowd of hanging endpoints holds stay bounded.
 */
const HANGING = 256;
/**
 * After a claim that took nothing (nothing due, or every endpoint with work at its bound), the next waits
 * this long: under load every write and every answer wakes the dispatcher, and one claim then serves all
 * those wakes. After a claim that took deliveries, a wake claims at once: work is known to be due.
 */
const CLAIM_GAP_MS = 5;
/**
 * Attempts started are paced per window of this long, by the event loop's utilization over the last one
 * (see DeliveryPace): while API requests keep the loop three-quarters busy or more, deliveries start at the
 * floor's rate, 100/s (so about 2–3 % of the loop's time), and catch up once it has room. The ceiling
 * (10,000/s) never binds: unpaced, one process sent at most about 2,000/s.
 */
const PACE_WINDOW_MS = 100;
const PACE = { floor: 10, ceiling: 1000 };
/** A claim outlives its attempt's time-out by this much, so only a dead instance's claims expire. */
const LEASE_MARGIN_MS = 30_000;
/**
 * On stop, attempts in flight get this long to finish and be recorded; the rest are cut off, and get as long
 * again to be recorded as such (`stopped`, due again at once); one whose record fails is left to its lease.
 */
const STOP_WAIT_MS = 2000;

/**
 * Sends due webhook deliveries: claims them (a lease, so instances never send one at once), posts each,
 * and records the attempt. Wakes every POLL_MS, at once when this process committed a change (changed()),
 * and when an attempt ends. All I/O is asynchronous; nothing here runs long on the event loop. While API
 * requests keep the loop busy, attempts start at a paced rate (PACE_WINDOW_MS): deliveries lag, requests don't.
 */
export class Dispatcher {
  readonly #options: DispatcherOptions;
  readonly #leaseMs: number;
  readonly #slots = new EndpointSlots({ perEndpoint: PER_ENDPOINT, trial: TRIAL, hanging: HANGING, slowMs: SLOW_MS });
  readonly #attempts = new Set<Promise<void>>();
  /**
   * Deliveries claimed and not begun, by endpoint: claimed ahead (AHEAD), or waiting for room (IN_FLIGHT,
   * the pace). Begun as room comes; given back (DeliveryStore.release) on stop.
   */
  readonly #ready = new Map<number, DueDelivery[]>();
  /** Endpoints last claimed with a rate limit: nothing is claimed ahead for them, their gate paces them. */
  readonly #limited = new Set<number>();
  /** Claims being given back. */
  readonly #givingBack = new Set<Promise<void>>();
  /** Attempts that count against IN_FLIGHT: started less than SLOW_MS ago and not yet recorded. */
  #busy = 0;
  /** Of those, probes of endpoints that hang: they may take half of IN_FLIGHT, the rest is the others'. */
  #busyProbing = 0;
  /** Cuts off the attempts still in flight once the stop's wait is over. */
  readonly #abandon = new AbortController();
  readonly #agents: EndpointAgents;
  readonly #secrets: SecretsRead;
  /** Endpoints' rate limits: what a limited endpoint may start of what was claimed for it. */
  readonly #gate: StartGate;
  readonly #pace = new DeliveryPace(PACE);
  /** Attempts begun and API requests answered in the current pace window; whether a claim was held back. */
  #startedInWindow = 0;
  #answeredInWindow = 0;
  #heldBack = false;
  #stopWatching: (() => void) | undefined;
  #poll: NodeJS.Timeout | undefined;
  #claiming: Promise<void> | undefined;
  /** The gap after a claim (CLAIM_GAP_MS): wakes meanwhile ask for one claim after it. */
  #gap: NodeJS.Timeout | undefined;
  #claimAgain = false;
  #stopping = false;
  /** Claims are failing (the database is away): logged once when it starts and once when it ends. */
  #claimsFailing = false;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#leaseMs = options.timeoutMs + LEASE_MARGIN_MS;
    this.#agents = new EndpointAgents(options.policy, PER_ENDPOINT);
    this.#secrets = new SecretsRead(options.deliveries);
    const { startLimiter: limiter, endpointStarts: starts, log, metrics } = options;
    this.#gate = new StartGate({ limiter, starts, log, metrics, free: () => this.wake() });
    // Each attempt in flight listens for the stop; they are bounded by the slots, not by a constant.
    setMaxListeners(0, this.#abandon.signal);
  }

  start(): void {
    this.#poll = setInterval(() => this.wake(), POLL_MS);
    this.#poll.unref();
    this.#stopWatching = watchEventLoop(PACE_WINDOW_MS, (utilization) => this.#endWindow(utilization));
    this.wake();
  }

  /** The API answered a request (the pace yields only to a loop busy with requests). */
  answered(): void {
    this.#answeredInWindow++;
  }

  /** A new pace window: its allowance from the last one's; a claim held back goes now. */
  #endWindow(utilization: number): void {
    this.#pace.observe(utilization, this.#startedInWindow, this.#answeredInWindow);
    this.#startedInWindow = 0;
    this.#answeredInWindow = 0;
    if (!this.#heldBack) return;
    this.#heldBack = false;
    this.wake();
  }

  /**
   * This process committed a change: claims now, unless the store knows no endpoint could be sent anything
   * (none enabled): then events nobody listens to cost no claim, and the poll still looks.
   */
  changed(): void {
    if (!this.#options.deliveries.unreached()) this.wake();
  }

  /**
   * Looks for due deliveries now, or after the claim under way (and its gap): one claim for all wakes meanwhile.
   * Outside any trace, whoever wakes it (a request's commit, an attempt's end): the claims, the timers and
   * the attempts it starts would otherwise join the waker's trace (nothing to do with tracing off).
   */
  wake(): void {
    context.with(ROOT_CONTEXT, () => this.#wake());
  }

  #wake(): void {
    if (this.#stopping) return;
    if (this.#claiming !== undefined || this.#gap !== undefined) {
      this.#claimAgain = true;
      return;
    }
    const claimed = this.#claim().catch((error: unknown) => {
      this.#options.log.error({ err: error }, 'claiming webhook deliveries failed unexpectedly');
      return 0;
    });
    this.#claiming = claimed.then((took) => {
      this.#claiming = undefined;
      if (this.#stopping) return;
      const again = () => {
        this.#gap = undefined;
        if (!this.#claimAgain) return;
        this.#claimAgain = false;
        this.wake();
      };
      if (took > 0) again();
      else this.#gap = setTimeout(again, CLAIM_GAP_MS);
    });
  }

  /** Claims no more; waits a little for attempts in flight, then cuts the rest off and waits for their records. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#poll);
    this.#stopWatching?.();
    clearTimeout(this.#gap);
    this.#gate.stop();
    this.#giveBack([...this.#ready.values()].flat());
    this.#ready.clear();
    const settled = () => Promise.allSettled([this.#claiming, ...this.#givingBack, ...this.#attempts]);
    // Unreferenced: a wait that lost the race must not keep the stopped process alive for its 2 s. What
    // is in flight holds the process while it is (its sockets and timers are referenced).
    const wait = () => sleep(STOP_WAIT_MS, undefined, { ref: false });
    await Promise.race([settled(), wait()]);
    this.#abandon.abort();
    await Promise.race([settled(), wait()]);
    this.#agents.destroy();
  }

  /**
   * Claims what is due and begins it; resolves with how many it took. Endpoints that answer (and those not
   * seen yet) first; then, with what is left, probes of those known to hang, so a crowd of them cannot
   * take the turns of the others. The second claim is made only when some endpoint waits to probe.
   */
  async #claim(): Promise<number> {
    this.#beginReady();
    const now = Date.now();
    const { free, freeOtherwise, fullOwners, probes } = this.#slots.free(now);
    // An endpoint at its rate limit gets no slot until it may start again: its backlog waits in the store.
    const blocked = this.#gate.blocked(now);
    const wanted = this.#wanted(free, now);
    for (const id of blocked) wanted.set(id, 0);
    const first = await this.#claimSome({ free: wanted, freeOtherwise, fullOwners }, false);
    if (first === undefined || probes.size === 0) return first ?? 0;
    const probing = new Map([...free].map(([id]) => [id, probes.get(id) ?? 0]));
    for (const id of blocked) probing.set(id, 0);
    return first + ((await this.#claimSome({ free: probing, freeOtherwise: 0, fullOwners }, true)) ?? 0);
  }

  /**
   * What a claim may take of each endpoint: its free slots, AHEAD more when it is proven, less what is
   * claimed for it here already (of an endpoint not known to the slots yet, nothing more while its first
   * waits here).
   */
  #wanted(free: ReadonlyMap<number, number>, now: number): Map<number, number> {
    const wanted = new Map<number, number>();
    for (const [id, slots] of free) {
      const ahead = !this.#limited.has(id) && this.#slots.proven(id, now) ? AHEAD : 0;
      wanted.set(id, Math.max(0, slots + ahead - (this.#ready.get(id)?.length ?? 0)));
    }
    for (const id of this.#ready.keys()) if (!wanted.has(id)) wanted.set(id, 0);
    return wanted;
  }

  /**
   * One claim within the pace and IN_FLIGHT (probes within half of it, so a crowd probing at once leaves
   * the endpoints that answer room in the next claims too); how many it took, undefined when it could take
   * none. Probes begin at once; the rest as their endpoints' slots allow (#beginReady): all at once but what
   * was claimed ahead for proven endpoints.
   */
  async #claimSome(
    slots: Pick<ClaimQuery, 'free' | 'freeOtherwise' | 'fullOwners'>,
    probing: boolean,
  ): Promise<number | undefined> {
    const allowed = this.#pace.allowance - this.#startedInWindow;
    if (allowed <= 0) this.#heldBack = true;
    const room = probing ? Math.min(IN_FLIGHT - this.#busy, IN_FLIGHT / 2 - this.#busyProbing) : IN_FLIGHT - this.#busy;
    const limit = Math.min(room, allowed);
    if (limit <= 0) return undefined;
    let due: DueDelivery[];
    try {
      due = await this.#options.deliveries.claim({ now: new Date(), leaseMs: this.#leaseMs, limit, ...slots });
    } catch (error) {
      if (!this.#claimsFailing)
        this.#options.log.warn({ err: error }, 'claiming webhook deliveries failed; will retry');
      this.#claimsFailing = true;
      return undefined;
    }
    if (this.#claimsFailing) this.#options.log.info('claiming webhook deliveries works again');
    this.#claimsFailing = false;
    // Claimed during a stop: left to their lease, as if this process had died.
    if (this.#stopping) return undefined;
    const limited: DueDelivery[] = [];
    for (const delivery of due) {
      const id = delivery.endpoint.id;
      if (delivery.endpoint.rateLimit !== null) {
        this.#limited.add(id);
        limited.push(delivery);
      } else if (probing) {
        this.#limited.delete(id);
        this.#begin(delivery, true);
      } else {
        this.#limited.delete(id);
        const queue = this.#ready.get(id);
        if (queue === undefined) this.#ready.set(id, [delivery]);
        else queue.push(delivery);
      }
    }
    this.#beginReady();
    // After the others have begun: they never wait for a limited endpoint's answer from the limiter.
    if (limited.length > 0) await this.#passLimited(limited, probing);
    return due.length;
  }

  /**
   * Begins what a limited endpoint's limit lets through, logged as started at the limit's time, which
   * counted it; the rest the gate holds back. One let through with no room left (its endpoint became
   * limited after more was claimed ahead for it) is given back: its start was counted, never made, which
   * only slows the endpoint.
   */
  async #passLimited(limited: DueDelivery[], probing: boolean): Promise<void> {
    await this.#gate.pass(limited, (passed) => {
      // Stopping meanwhile: left to their lease, as what a claim takes during a stop is.
      if (this.#stopping) return;
      const unused: DueDelivery[] = [];
      for (const { delivery, startedAt, sent } of passed) {
        if (probing || (this.#slots.open(delivery.endpoint.id) > 0 && this.#busy < IN_FLIGHT))
          this.#begin(delivery, probing, { startedAt, sent });
        else unused.push(delivery);
      }
      this.#giveBack(unused);
    });
  }

  /**
   * Begins the deliveries waiting here as their endpoints' own slots, IN_FLIGHT and the pace allow, each
   * endpoint's in the order claimed. One whose claim would run out before its attempt could be recorded
   * is given back instead (it waited for long: its endpoint's attempts hung).
   */
  #beginReady(): void {
    if (this.#stopping) return;
    const now = Date.now();
    const stale: DueDelivery[] = [];
    for (const [endpoint, queue] of this.#ready) {
      while (queue.length > 0 && this.#slots.open(endpoint) > 0 && this.#busy < IN_FLIGHT) {
        if (this.#startedInWindow >= this.#pace.allowance) {
          this.#heldBack = true;
          return;
        }
        const delivery = queue.shift() as DueDelivery;
        if (queue.length === 0) this.#ready.delete(endpoint);
        if (delivery.claimedUntil.getTime() - now < this.#options.timeoutMs + LEASE_MARGIN_MS / 2) stale.push(delivery);
        else this.#begin(delivery, false);
      }
    }
    this.#giveBack(stale);
  }

  /** Gives back claims not attempted, so that any claim takes them at once; on failure, left to their lease. */
  #giveBack(deliveries: DueDelivery[]): void {
    if (deliveries.length === 0) return;
    const given = this.#options.deliveries
      .release(deliveries)
      .catch((error: unknown) =>
        this.#options.log.warn({ err: error }, 'giving back webhook deliveries failed; left to their lease'),
      )
      .finally(() => this.#givingBack.delete(given));
    this.#givingBack.add(given);
  }

  /**
   * An attempt to `endpoint` ended or stopped counting as busy: what waits here for that room begins, and
   * a claim is made unless the endpoint is still fed from what was claimed ahead for it.
   */
  #roomFor(endpoint: number): void {
    this.#beginReady();
    if ((this.#ready.get(endpoint)?.length ?? 0) <= AHEAD / 2) this.wake();
  }

  /**
   * Begins an attempt; a rate limit's is logged as started at the limit's time, which counted it, and tells
   * the gate when its request is written (`sent`).
   */
  #begin(delivery: DueDelivery, probing: boolean, limited?: Pick<PassedDelivery, 'startedAt' | 'sent'>): void {
    const endpoint = delivery.endpoint.id;
    const first = this.#slots.begin(endpoint, delivery.endpoint.owner, Date.now());
    this.#startedInWindow++;
    this.#busy++;
    if (probing) this.#busyProbing++;
    let busy = true;
    const idle = () => {
      if (!busy) return;
      busy = false;
      this.#busy--;
      if (probing) this.#busyProbing--;
      this.#roomFor(endpoint);
    };
    const slow = setTimeout(idle, SLOW_MS);
    slow.unref();
    let released = false;
    // The endpoint's slot is free once its request is over; recording the attempt does not hold it.
    const release = (delivered: boolean) => {
      if (released) return;
      released = true;
      this.#slots.end(endpoint, delivered, Date.now());
      this.#roomFor(endpoint);
    };
    const attempt = runAttempt(delivery, release, {
      ...this.#options,
      signal: this.#abandon.signal,
      agent: (url) => this.#agents.for(endpoint, url),
      secrets: this.#secrets,
      startedAt: limited?.startedAt,
      // Nothing is known of the endpoint: its first attempt is work only until it is written (IN_FLIGHT).
      sent: first
        ? (at) => {
            limited?.sent(at);
            idle();
          }
        : limited?.sent,
    })
      .catch((error: unknown) => this.#options.log.error({ err: error }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        this.#attempts.delete(attempt);
        clearTimeout(slow);
        release(false);
        // Recorded: the next event of its subject may go now (ordering per subject), so a slow attempt,
        // which no longer counts as busy, wakes the dispatcher too.
        if (busy) idle();
        else this.#roomFor(endpoint);
      });
    this.#attempts.add(attempt);
  }
}
