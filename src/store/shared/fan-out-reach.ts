/**
 * A fan-out step (sqlite/fan-out.ts, postgres/fan-out.ts) reads at most this many events per delivery it
 * may queue: events of types an endpoint is not subscribed to are passed over this many at a time, not one
 * claim's limit at a time (a claim that queued nothing waits for the next wake, up to the dispatcher's
 * 500 ms poll: 128 events a second at 64 a claim, where a bulk import records thousands).
 */
export const READ_PER_QUEUED = 16;
