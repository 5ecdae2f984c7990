import { performance } from 'node:perf_hooks';

/**
 * The event loop busier than this over a window: API requests are waiting (at 0.75 a request waits about
 * three times its own time for the loop), so deliveries give way. At 0.9, on PostgreSQL sharing the host,
 * the loop rarely got there while deliveries slowed creates by a third or more (docs/decisions/delivery-pace.md).
 */
const BUSY = 0.75;
/** Less busy than this: there is room, and deliveries may start faster again. */
const ROOMY = 0.5;

export interface PaceBounds {
  /** Attempts a window may start however busy the loop is: deliveries always progress. */
  readonly floor: number;
  /** Attempts a window may start when the loop has room. */
  readonly ceiling: number;
}

/**
 * How many webhook attempts the dispatcher may start in the next window, from how busy the event loop
 * was in the last one (its utilization, 0–1): deliveries yield to API requests. A busy window halves what
 * was actually started (not the allowance, which may have gone unused), down to the floor; a window with
 * room doubles the allowance, up to the ceiling; in between it holds. Starts are paced, not attempts in
 * flight: a slow endpoint's attempts hold their own slots, never the others' allowance.
 */
export class DeliveryPace {
  readonly #bounds: PaceBounds;
  #allowance: number;

  constructor(bounds: PaceBounds) {
    this.#bounds = bounds;
    this.#allowance = bounds.ceiling;
  }

  /** Attempts the current window may start. */
  get allowance(): number {
    return this.#allowance;
  }

  /**
   * Ends a window in which `started` attempts began, the API answered `answered` requests and the loop was
   * `utilization` busy; the next window's allowance. A window in which the API answered nothing counts as
   * room whatever the loop did: it was busy with the engine's own work (claims, fan-out, attempts), and no
   * request waited; an idle process drains a backlog at full speed.
   */
  observe(utilization: number, started: number, answered: number): number {
    const { floor, ceiling } = this.#bounds;
    const busy = answered > 0 && utilization >= BUSY;
    const roomy = answered === 0 || utilization < ROOMY;
    if (busy) this.#allowance = Math.max(floor, Math.floor(Math.min(started, this.#allowance) / 2));
    else if (roomy) this.#allowance = Math.min(ceiling, this.#allowance * 2);
    return this.#allowance;
  }
}

/** Calls `onWindow` every `windowMs` with the event loop's utilization over that window; returns a stop. */
export function watchEventLoop(windowMs: number, onWindow: (utilization: number) => void): () => void {
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    onWindow(performance.eventLoopUtilization(now, last).utilization);
    last = now;
  }, windowMs);
  timer.unref();
  return () => clearInterval(timer);
}
