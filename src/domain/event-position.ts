/**
 * Where an event sits in the feed. Events are ordered by (tx, seq): on SQLite tx is always 0 and seq is the
 * commit order; on PostgreSQL tx is the writing transaction's id (xid8), and the feed shows an event only
 * once no transaction with a smaller id can still commit (see docs/decisions/feed-order-without-a-lock.md).
 */
export interface EventPosition {
  readonly tx: number;
  readonly seq: number;
}

/** Before every event. */
export const FEED_START: EventPosition = { tx: 0, seq: 0 };

/** Whether `a` comes after `b` in the feed. */
export function positionAfter(a: EventPosition, b: EventPosition): boolean {
  return a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq);
}
