import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { ClaimQuery } from '../records.js';
import { earlierOfSubject, freeJson, type UnqueuedSql } from '../shared/delivery-rows.js';
import { QUEUE_PER_STEP, READ_PER_QUEUED } from '../shared/fan-out-reach.js';
import { ENDED } from './events.js';
import type { Database } from './postgres-db.js';
import { SUBSCRIBED } from './subscribed.js';

/** At a service disable (endpoint-health.ts), the assignment that makes the endpoint owed what the feed shows. */
export const OWE = `(owed_tx, owed_seq) = (SELECT tx, seq FROM events WHERE ${ENDED} ORDER BY tx DESC, seq DESC LIMIT 1)`;

/** The endpoints fan-out has something to do for: enabled, or owed events from before a service disable. */
const REACHED = '(w.enabled OR w.owed_seq IS NOT NULL)';

/** SQL parameters holding a claim's slots (ClaimQuery): `free` as JSON by endpoint id, the rest as they are. */
export interface SlotsSql {
  readonly free: string;
  readonly freeOtherwise: string;
  readonly fullOwners: string;
}

/** What a claim may take of the endpoint `w`: its free slots, else those of an endpoint not known (none for a full owner). */
export const freeSlots = (slots: SlotsSql) => `coalesce((${slots.free}::jsonb ->> w.id::text)::int,
  CASE WHEN w.owner = ANY (${slots.fullOwners}::text[]) THEN 0 ELSE ${slots.freeOtherwise}::int END)`;

/**
 * The endpoints a step feeds: those the claim may take from, and disabled ones owed events. One the claim
 * may take nothing of (its attempts hang, or it is at its bound) keeps what is queued for it: fanning a
 * crowd of them out on every step took each step's writes, and gave every other endpoint one event a step.
 */
const FED = `(NOT w.enabled OR ${freeSlots({ free: '$2', freeOtherwise: '$3', fullOwners: '$4' })} > 0)`;

/**
 * The last event fan-out may take the endpoint `w` to, as a bound on (tx, seq): the feed's end (ENDED: every
 * event of a transaction below the snapshot's xmin) while it is enabled; while it is disabled, what it is owed
 * (OWED; null: nothing). One row comparison, so the index reads just the span from its position to there.
 */
const REACH = `(CASE WHEN w.enabled THEN pg_snapshot_xmin(pg_current_snapshot()) ELSE w.owed_tx END,
  CASE WHEN w.enabled THEN -1 ELSE w.owed_seq END)`;

/** Events fan-out owes the endpoint `w` that the feed shows already (their transactions ended). */
const AFTER_POSITION = `SELECT e.tx, e.seq, e.type, e.owner, e.at, e.subject FROM events e
  WHERE (e.tx, e.seq) > (w.fanned_tx, w.fanned_seq) AND (e.tx, e.seq) <= ${REACH} ORDER BY e.tx, e.seq`;

/**
 * The endpoint `w`'s events not queued yet, for the delivery stats (also those the feed does not show yet):
 * counted by seq (every event after its position, of its types or not; seq skips numbers a rolled-back
 * insert took), one probe, not a read of each; the first found by a walk to the first of its types.
 */
export const UNQUEUED: UnqueuedSql = {
  count: `SELECT greatest(0, coalesce(max(e.seq), 0) - w.fanned_seq) FROM events e`,
  first: `SELECT e.seq FROM events e WHERE (e.tx, e.seq) > (w.fanned_tx, w.fanned_seq) AND ${SUBSCRIBED}
    ORDER BY e.tx, e.seq LIMIT 1`,
};

const ENDPOINT = `SELECT w.id, w.owner, w.events, w.enabled, w.fanned_tx, w.fanned_seq, w.owed_tx, w.owed_seq,
    w.ordering
  FROM webhook_endpoints w`;

/**
 * The deliveries of the events in `span` to endpoints subscribed to their type (ON CONFLICT: after
 * migration 5, events the trigger fanned out may be looked at again; see there); and the log entry of each
 * that waits for an earlier event of its subject (its endpoint orders by subject): pending, naming the
 * newest of those events, at its own event's time. That is the one before it in the span (`earlier`), or
 * else one still pending from before (one probe): the rows this statement queues are not in the table for it.
 * Materialized, so the probe runs once a delivery: inlined, it ran for the filter and again for the value.
 */
const QUEUE = `queued AS (
      INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at, subject)
      SELECT seq, id, 'pending', at, subject FROM span WHERE subscribed
      ON CONFLICT (event_seq, endpoint_id) DO NOTHING
      RETURNING id, endpoint_id, event_seq, subject
    ),
    waits AS MATERIALIZED (
      SELECT q.id, q.endpoint_id, q.event_seq, s.type, s.at,
        coalesce(s.earlier, (${earlierOfSubject('q')} ORDER BY b.event_seq DESC LIMIT 1)) AS waiting_for
      FROM queued q
      JOIN locked w ON w.id = q.endpoint_id AND w.ordering = 'subject'
      JOIN span s ON s.id = q.endpoint_id AND s.seq = q.event_seq
      WHERE q.subject IS NOT NULL
    ),
    waiting AS (
      INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, attempted_at,
        triggered_by, waiting_for)
      SELECT id, endpoint_id, event_seq, type, 1, 'pending', at, 'event', waiting_for FROM waits
      WHERE waiting_for IS NOT NULL
    )`;

/** Of an event in a span, the one before it of the same subject that the span queues too (null: none). */
const earlierInSpan = (subscribed: string) =>
  `lag(e.seq) OVER (PARTITION BY w.id, ${subscribed}, e.subject ORDER BY e.tx, e.seq) AS earlier`;

/** The statements, exported so a test can check their plans. */
export const FAN_OUT_QUERIES = {
  /**
   * Every endpoint with events owed that the claim's slots ($2–$4, as in the claim) feed (FED), locked (one
   * another instance is fanning out is skipped, not waited for): of the next reach × READ_PER_QUEUED events
   * owed after its position, queues the deliveries of those up to its reach-th subscribed one, and moves it
   * to the last event taken. The reach is $1 deliveries shared by the endpoints fed, at least one event
   * each. Answers how many endpoints it reaches (fed or not).
   */
  step: `WITH reach AS (
      SELECT greatest(1, ceil($1::numeric / greatest(1, count(*) FILTER (WHERE ${FED}))))::int AS events,
        count(*)::int AS endpoints
      FROM webhook_endpoints w WHERE ${REACHED}
    ),
    locked AS (
      ${ENDPOINT} WHERE ${REACHED} AND ${FED} AND EXISTS (${AFTER_POSITION}) FOR UPDATE OF w SKIP LOCKED
    ),
    span AS (
      SELECT w.id, e.tx, e.seq, e.type, e.at, e.subject, e.subscribed, ${earlierInSpan('e.subscribed')}
      FROM locked w CROSS JOIN LATERAL (
        SELECT e.tx, e.seq, e.type, e.at, e.subject, ${SUBSCRIBED} AS subscribed,
          count(*) FILTER (WHERE ${SUBSCRIBED}) OVER (ORDER BY e.tx, e.seq) AS subscribed_through
        FROM (${AFTER_POSITION} LIMIT (SELECT events FROM reach) * ${READ_PER_QUEUED}) e
      ) e WHERE e.subscribed_through <= (SELECT events FROM reach)
    ),
    ${QUEUE},
    through AS (SELECT DISTINCT ON (id) id, tx, seq FROM span ORDER BY id, tx DESC, seq DESC),
    moved AS (UPDATE webhook_endpoints w SET fanned_tx = t.tx, fanned_seq = t.seq FROM through t WHERE w.id = t.id)
    SELECT endpoints FROM reach`,
  /**
   * The endpoint $1, whatever its state, waiting for its lock (its subscription is about to change): queues
   * the deliveries of every event it is owed; then moves it to the newest event the feed shows, owed
   * nothing (one probe: the events of a disabled endpoint owed nothing are not read).
   */
  settle: `WITH locked AS (${ENDPOINT} WHERE w.id = $1 FOR UPDATE OF w),
    span AS (
      SELECT w.id, e.seq, e.type, e.at, e.subject, ${SUBSCRIBED} AS subscribed, ${earlierInSpan(SUBSCRIBED)}
      FROM locked w CROSS JOIN LATERAL (${AFTER_POSITION}) e WHERE ${REACHED}
    ),
    ${QUEUE},
    newest AS (SELECT tx, seq FROM events WHERE ${ENDED} ORDER BY tx DESC, seq DESC LIMIT 1),
    later AS (SELECT n.* FROM locked l, newest n WHERE (n.tx, n.seq) > (l.fanned_tx, l.fanned_seq))
    UPDATE webhook_endpoints w SET fanned_tx = coalesce(n.tx, l.fanned_tx), fanned_seq = coalesce(n.seq, l.fanned_seq),
      owed_tx = NULL, owed_seq = NULL
    FROM locked l LEFT JOIN later n ON true WHERE w.id = l.id`,
  /** Every transaction that has ended has an id below this; and whether every one below $1 has ended. */
  endedBelow: 'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS tx',
  allEndedBelow: 'SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS ended',
};

/**
 * How long a subscription change waits for the transactions older than it to end. Ours last milliseconds;
 * past this (a transaction held open elsewhere on the server: ids are server-wide), it settles what has
 * ended and goes on, and the events behind that transaction are judged by the new subscription.
 */
const SETTLE_WAIT_MS = 5000;
const SETTLE_POLL_MS = 2;

/**
 * Fan-out on PostgreSQL: an event's deliveries are queued after its commit, not in it
 * (docs/decisions/fan-out-after-commit.md). Each endpoint keeps the (tx, seq) of the last event it was
 * fanned out to, and follows the
 * feed: only events whose transactions have ended, in (tx, seq) order, so none can commit behind a
 * position (events.ts). A claim that found less due than it could take steps the endpoints on first;
 * a subscription change first settles the old one, so an event goes to the endpoints subscribed and
 * enabled when it was recorded. Each step or settle is one statement: the queue and the move commit together.
 */
export class PostgresFanOut {
  readonly #db: Database;
  /** The last step reached no endpoint (none enabled, none owed) and no endpoint changed here since. */
  #unreached = false;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Fans the endpoints owed events that `slots` feed out to about QUEUE_PER_STEP more deliveries, at least
   * one event each; resolves with how many endpoints it reached.
   */
  async step(slots: Pick<ClaimQuery, 'free' | 'freeOtherwise' | 'fullOwners'>): Promise<number> {
    const values = [QUEUE_PER_STEP, freeJson(slots.free), slots.freeOtherwise, slots.fullOwners];
    const [row] = await this.#db.rows<{ endpoints: number }>('fan-out-step', FAN_OUT_QUERIES.step, values);
    const endpoints = row?.endpoints ?? 0;
    this.#unreached = endpoints === 0;
    return endpoints;
  }

  /**
   * True when the last step reached no endpoint, and no endpoint was created or changed through this
   * process since: then nothing recorded can be queued, nor anything claimed. Another instance's new
   * endpoint is found by the next step.
   */
  unreached(): boolean {
    return this.#unreached;
  }

  /** An endpoint was created or its subscription changed here: the next claim steps again. */
  endpointsChanged(): void {
    this.#unreached = false;
  }

  /**
   * Before an endpoint's subscription changes, in the change's transaction (call waitForOlder() first,
   * outside it): queues what was recorded under the old one (if it is enabled, or what it is owed from
   * before a service disable), then moves it past every
   * event the feed shows, so nothing recorded while it was disabled, or of a type it was not subscribed
   * to, is sent under the new one.
   */
  async settle(client: pg.ClientBase, endpoint: number): Promise<void> {
    await client.query({ name: 'fan-out-settle', text: FAN_OUT_QUERIES.settle, values: [endpoint] });
  }

  /**
   * Waits until every transaction older than the call has ended (at most SETTLE_WAIT_MS): then a settle
   * reaches every event committed before the change, which may still sit behind an older transaction.
   * Older: with an id below the snapshot's xmax, as every ended transaction's is; those above it that
   * still run are concurrent with the change.
   */
  async waitForOlder(): Promise<void> {
    const [line] = await this.#db.rows<{ tx: string }>('fan-out-ended-below', FAN_OUT_QUERIES.endedBelow, []);
    const deadline = Date.now() + SETTLE_WAIT_MS;
    for (;;) {
      const [row] = await this.#db.rows<{ ended: boolean }>('fan-out-all-ended', FAN_OUT_QUERIES.allEndedBelow, [
        line?.tx,
      ]);
      if (row?.ended === true || Date.now() >= deadline) return;
      await sleep(SETTLE_POLL_MS);
    }
  }
}
