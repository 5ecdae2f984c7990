import { SAME_OWNER } from '../shared/event-rows.js';

/**
 * The endpoint `w`'s subscription holds for an event `e`'s type (`events` is comma-separated).
 * Fan-out (fan-out.ts) and retention (events.ts) judge an event's endpoints by it alike.
 */
export const SUBSCRIBED = `e.type = ANY (string_to_array(w.events, ',')) AND ${SAME_OWNER}`;
