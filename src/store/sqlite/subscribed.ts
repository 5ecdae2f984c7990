import { SAME_OWNER } from '../shared/event-rows.js';

/**
 * An event of `e` is of a type the endpoint `w` is subscribed to (`events` is comma-separated).
 * Fan-out (fan-out.ts) and retention (events.ts) judge an event's endpoints by it alike.
 */
export const SUBSCRIBED = `instr(',' || w.events || ',', ',' || e.type || ',') > 0 AND ${SAME_OWNER}`;

/**
 * Fan-out owes the endpoint `w` the event `e`, of its types or not: `e` is after its position and, unless
 * `w` is enabled, not after the newest event when the service disabled it (owed_seq; null when nothing is
 * owed), so what was recorded before is still queued for it, pending.
 */
export const OWED = `e.seq > w.fanned_seq AND (w.enabled = 1 OR e.seq <= w.owed_seq)`;
