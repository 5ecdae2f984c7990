/**
 * A fan-out step (sqlite/fan-out.ts, postgres/fan-out.ts) reads at most this many events per delivery it
 * may queue: events of types an endpoint is not subscribed to are passed over this many at a time, not one
 * claim's limit at a time (a claim that queued nothing waits for the next wake, up to the dispatcher's
 * 500 ms poll: 128 events a second at 64 a claim, where a bulk import records thousands).
 */
export const READ_PER_QUEUED = 16;

/**
 * Deliveries one fan-out step queues, about: each endpoint the claim may take from (and each disabled one
 * owed events) gets this divided by their number of events (at least one); one it may take nothing of (its
 * attempts hang, or it is at its bound) gets none. A step is one write; with 1,000 endpoints a step of a
 * claim's 64 events each wrote 64,000 rows in one go (on SQLite, on the event loop), and stepping 1,000 that
 * hang wrote 1,000 rows a step and gave a healthy endpoint beside them one event a step. A step runs only
 * when a claim found less due than it could take, so a backlog is queued as it is sent.
 */
export const QUEUE_PER_STEP = 256;

/**
 * A claim steps fan-out at least this often, also while what is queued keeps every claim full: an endpoint
 * with nothing queued waits no longer than this behind other endpoints' backlogs.
 */
const STEP_AT_LEAST_EVERY_MS = 250;

/** When a claim steps fan-out although what is queued would fill it (STEP_AT_LEAST_EVERY_MS). */
export class FanOutCadence {
  #steppedAt = Number.NEGATIVE_INFINITY;

  overdue(now: number): boolean {
    return now - this.#steppedAt >= STEP_AT_LEAST_EVERY_MS;
  }

  stepped(now: number): void {
    this.#steppedAt = now;
  }
}
