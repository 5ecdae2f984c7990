import { SAME_OWNER } from '../shared/event-rows.js';

/**
 * An event of `e` is of a type the endpoint `w` is subscribed to (`events` is comma-separated).
 * Fan-out (fan-out.ts) and retention (events.ts) judge an event's endpoints by it alike.
 */
export const SUBSCRIBED = `instr(',' || w.events || ',', ',' || e.type || ',') > 0 AND ${SAME_OWNER}`;
