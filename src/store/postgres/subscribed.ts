import { SAME_OWNER } from '../shared/event-rows.js';

/**
 * The endpoint `w`'s subscription holds for an event `e`'s type (`events` is comma-separated).
 * Fan-out (fan-out.ts) and retention (events.ts) judge an event's endpoints by it alike.
 */
export const SUBSCRIBED = `e.type = ANY (string_to_array(w.events, ',')) AND ${SAME_OWNER}`;

/**
 * Fan-out owes the endpoint `w` the event `e`, of its types or not: `e` is after its position and, unless
 * `w` is enabled, not after the newest event the feed showed when the service disabled it (owed_tx,
 * owed_seq; null when nothing is owed), so what was recorded before is still queued for it, pending.
 */
export const OWED = `(e.tx, e.seq) > (w.fanned_tx, w.fanned_seq)
  AND (w.enabled OR (e.tx, e.seq) <= (w.owed_tx, w.owed_seq))`;
