import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { ENDED } from './events.js';
import type { Database } from './postgres-db.js';

/**
 * Where a new endpoint starts: after every transaction that has an id when it is created. Those that ended
 * recorded before it existed; those still running are concurrent with its creation, and either way is
 * right for them. Every later event (`tx` ≥ the snapshot's xmax) is after this position (seq ≥ 1).
 */
export const NEW_ENDPOINT_POSITION = { tx: 'pg_snapshot_xmax(pg_current_snapshot())', seq: '0' };

/** The endpoint `w`'s subscription holds for an event `e`'s type (`events` is comma-separated). */
export const SUBSCRIBED = `e.type = ANY (string_to_array(w.events, ','))`;

/** Events after the endpoint `w`'s position that the feed shows already (their transactions ended). */
const AFTER_POSITION = `SELECT tx, seq, type, at FROM events
  WHERE (tx, seq) > (w.fanned_tx, w.fanned_seq) AND ${ENDED} ORDER BY tx, seq`;

/**
 * Over the endpoints `locked` selects (locked, so no other instance moves them meanwhile): queues the
 * deliveries of at most $1 events (null: all) after each one's position, if it is enabled and subscribed,
 * and moves it to the last of them. ON CONFLICT: after migration 6, events the trigger fanned out may be
 * looked at again (see there).
 */
const fanOut = (locked: string) => `WITH locked AS (${locked}),
    span AS (
      SELECT w.id, w.enabled, e.tx, e.seq, e.at, ${SUBSCRIBED} AS subscribed
      FROM locked w CROSS JOIN LATERAL (${AFTER_POSITION} LIMIT $1) e
    ),
    queued AS (
      INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at)
      SELECT seq, id, 'pending', at FROM span WHERE enabled AND subscribed
      ON CONFLICT (event_seq, endpoint_id) DO NOTHING
    ),
    through AS (SELECT DISTINCT ON (id) id, tx, seq FROM span ORDER BY id, tx DESC, seq DESC)
    UPDATE webhook_endpoints w SET fanned_tx = t.tx, fanned_seq = t.seq FROM through t WHERE w.id = t.id`;

const ENDPOINT = 'SELECT w.id, w.events, w.enabled, w.fanned_tx, w.fanned_seq FROM webhook_endpoints w';

/** The statements, exported so a test can check their plans. */
export const FAN_OUT_QUERIES = {
  /** Enabled endpoints with events to fan out; one another instance is fanning out is skipped, not waited for. */
  step: fanOut(`${ENDPOINT} WHERE w.enabled AND EXISTS (${AFTER_POSITION}) FOR UPDATE OF w SKIP LOCKED`),
  /** One endpoint, however it stands, waiting for its lock: its subscription is about to change. */
  settle: fanOut(`${ENDPOINT} WHERE w.id = $2 FOR UPDATE OF w`),
  /** The first transaction id not yet given out, and whether every transaction before one has ended. */
  nextTx: 'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS tx',
  endedBefore: 'SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS ended',
};

/**
 * How long a subscription change waits for the transactions older than it to end. Ours last milliseconds;
 * past this (a transaction held open elsewhere in the database), it settles what has ended and goes on.
 */
const SETTLE_WAIT_MS = 5000;
const SETTLE_POLL_MS = 2;

/**
 * Fan-out on PostgreSQL: an event's deliveries are queued after its commit, not in it (docs/decisions.md,
 * "Fan-out"). Each endpoint keeps the (tx, seq) of the last event it was fanned out to, and follows the
 * feed: only events whose transactions have ended, in (tx, seq) order, so none can commit behind a
 * position (events.ts). A claim first steps every enabled endpoint on by at most its limit of events;
 * a subscription change first settles the old one, so an event goes to the endpoints subscribed and
 * enabled when it was recorded. Each step or settle is one statement: the queue and the move commit together.
 */
export class PostgresFanOut {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Fans every enabled endpoint out to at most `span` more events (1 or more). */
  async step(span: number): Promise<void> {
    await this.#db.count('fan-out-step', FAN_OUT_QUERIES.step, [span]);
  }

  /**
   * Before an endpoint's subscription changes, in the change's transaction (call waitForOlder() first,
   * outside it): queues what was recorded under the old one (if it is enabled), then moves it past
   * everything recorded so far, so nothing recorded while it was disabled, or of a type it was not
   * subscribed to, is sent under the new one.
   */
  async settle(client: pg.ClientBase, endpoint: number): Promise<void> {
    await client.query({ name: 'fan-out-settle', text: FAN_OUT_QUERIES.settle, values: [null, endpoint] });
  }

  /**
   * Waits until every transaction that had an id when called has ended (at most SETTLE_WAIT_MS), so a
   * settle reaches every event committed before the change: one committed earlier may still sit behind an
   * older transaction's horizon.
   */
  async waitForOlder(): Promise<void> {
    const [next] = await this.#db.rows<{ tx: string }>('fan-out-next-tx', FAN_OUT_QUERIES.nextTx, []);
    const deadline = Date.now() + SETTLE_WAIT_MS;
    for (;;) {
      const [row] = await this.#db.rows<{ ended: boolean }>('fan-out-ended', FAN_OUT_QUERIES.endedBefore, [next?.tx]);
      if (row?.ended === true || Date.now() >= deadline) return;
      await sleep(SETTLE_POLL_MS);
    }
  }
}
