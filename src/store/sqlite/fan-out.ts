import type Database from 'better-sqlite3';
import { earlierOfSubject, type UnqueuedSql } from '../shared/delivery-rows.js';
import { READ_PER_QUEUED } from '../shared/fan-out-reach.js';
import { SUBSCRIBED } from './subscribed.js';

/** The newest event's seq: what an endpoint fanned out this far has been given everything of. */
export const EVENTS_HEAD = '(SELECT coalesce(max(seq), 0) FROM events)';

/**
 * How far fan-out takes the endpoint `w`: to the newest event while it is enabled; while it is disabled, to
 * the newest event when the service disabled it (owed_seq), so what was recorded before is still queued for
 * it, pending, in bounded steps; null (nowhere) when nothing is owed.
 */
const REACH = `CASE WHEN w.enabled = 1 THEN ${EVENTS_HEAD} ELSE w.owed_seq END`;

/** At a service disable (endpoint-health.ts), the assignment that makes the endpoint owed every event so far. */
export const OWE = `owed_seq = ${EVENTS_HEAD}`;

/** The endpoints fan-out has something to do for: enabled, or owed events from before a service disable. */
const REACHED = '(w.enabled = 1 OR w.owed_seq IS NOT NULL)';

/**
 * The endpoints a step feeds: the enabled ones in @fed (a JSON array of ids: those the claim may take from),
 * and disabled ones owed events. One the claim may take nothing of (its attempts hang, or it is at its
 * bound) keeps what is queued for it: fanning a crowd of them out on every step took each step's writes,
 * and gave every other endpoint one event a step.
 */
const FED = '(w.enabled = 0 OR w.id IN (SELECT value FROM json_each(@fed)))';

/**
 * How far a step takes the endpoint `w`: to its @span-th subscribed event after fanned_seq, if that is
 * within the next @span × READ_PER_QUEUED events; else to the last of those; else to the newest (also when
 * @span is null). Counted in events, not in seq numbers: retention leaves gaps in seq, which a step must
 * not crawl through.
 */
const THROUGH = `CASE WHEN @span IS NULL THEN ${EVENTS_HEAD} ELSE coalesce(
    (SELECT e.seq FROM (SELECT seq, type, owner FROM events WHERE seq > w.fanned_seq ORDER BY seq
      LIMIT @span * ${READ_PER_QUEUED}) e WHERE ${SUBSCRIBED} ORDER BY e.seq LIMIT 1 OFFSET @span - 1),
    (SELECT seq FROM events WHERE seq > w.fanned_seq ORDER BY seq LIMIT 1 OFFSET @span * ${READ_PER_QUEUED} - 1),
    ${EVENTS_HEAD}) END`;

/**
 * The endpoint `w`'s events not queued yet, for the delivery stats: counted by position (every event after
 * it, of its types or not), one probe, not a read of each; the first found by a walk to the first of its types.
 */
export const UNQUEUED: UnqueuedSql = {
  count: `SELECT max(0, coalesce(max(e.seq), 0) - w.fanned_seq) FROM events e`,
  first: `SELECT e.seq FROM events e WHERE e.seq > w.fanned_seq AND ${SUBSCRIBED} ORDER BY e.seq LIMIT 1`,
};

/** The statements, exported so a test can check their plans. */
export const FAN_OUT_QUERIES = {
  /** Whether an endpoint a step feeds has events owed after its fanned_seq: then a claim has work even with none due. */
  behind: `SELECT 1 FROM webhook_endpoints w WHERE ${REACHED} AND ${FED} AND w.fanned_seq < ${REACH} LIMIT 1`,
  /**
   * Queues the deliveries of the events after each endpoint's fanned_seq through THROUGH and within REACH,
   * at most @span of them, of the endpoints a step feeds (@endpoint: that one, fed or not). CROSS JOIN
   * keeps the endpoints outside: each reads its events by seq.
   */
  queue: `INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at, subject)
    SELECT e.seq, w.id, 'pending', e.at, e.subject FROM webhook_endpoints w
    CROSS JOIN events e ON e.seq > w.fanned_seq AND e.seq <= min(${THROUGH}, ${REACH})
    WHERE ${REACHED} AND (@endpoint IS NULL AND ${FED} OR w.id = @endpoint) AND ${SUBSCRIBED}`,
  advance: `UPDATE webhook_endpoints AS w SET fanned_seq = min(${THROUGH}, ${REACH})
    WHERE ${REACHED} AND ${FED} AND w.fanned_seq < ${REACH}`,
  toNewest: `UPDATE webhook_endpoints SET fanned_seq = ${EVENTS_HEAD}, owed_seq = NULL WHERE id = ?`,
  /** The newest delivery's id: those queued after it are the ones a queue statement adds. */
  newest: 'SELECT coalesce(max(id), 0) AS id FROM webhook_deliveries',
  /**
   * The log entry of each delivery queued after @after that waits for an earlier event of its subject (its
   * endpoint orders by subject): pending, naming the newest of those events, at its own event's time.
   * Materialized, so each delivery's probe runs once: flattened, SQLite ran it for the filter and the value.
   */
  waiting: `WITH q AS MATERIALIZED (
      SELECT d.id, d.endpoint_id, d.event_seq, e.type, e.at,
        (${earlierOfSubject('d')} ORDER BY b.event_seq DESC LIMIT 1) AS waiting_for
      FROM webhook_deliveries d
      JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.ordering = 'subject'
      JOIN events e ON e.seq = d.event_seq
      WHERE d.id > @after AND d.subject IS NOT NULL
    )
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, attempted_at,
      triggered_by, waiting_for)
    SELECT q.id, q.endpoint_id, q.event_seq, q.type, 1, 'pending', q.at, 'event', q.waiting_for FROM q
    WHERE q.waiting_for IS NOT NULL`,
};

/**
 * Fan-out on SQLite: an event's deliveries are queued after its commit, not in it. Each endpoint keeps the
 * seq of the newest event it was fanned out to; a claim queues the deliveries of the events after it, a
 * few at a time, and moves it on; a change of subscription first settles the old one (settle()), so an
 * event still goes to the endpoints subscribed and enabled when it was recorded. A create thus writes its
 * event only: on SQLite every write runs on the event loop, and the trigger that queued the delivery in
 * the create's transaction cost creates about a fifth of their rate (docs/decisions/fan-out-after-commit.md). Seq is the commit
 * order (one writer at a time), so no event can commit behind an endpoint's position.
 * Runs inside a write (the group commit): the queue and the move commit together.
 */
export class SqliteFanOut {
  readonly #behind: Database.Statement<[{ fed: string }], unknown>;
  readonly #queue: Database.Statement<[{ endpoint: number | null; span: number | null; fed: string }]>;
  readonly #advance: Database.Statement<[{ span: number; fed: string }]>;
  readonly #toNewest: Database.Statement<[number]>;
  readonly #newest: Database.Statement<[], { id: number }>;
  readonly #waiting: Database.Statement<[{ after: number }]>;

  constructor(db: Database.Database) {
    this.#behind = db.prepare(FAN_OUT_QUERIES.behind);
    this.#queue = db.prepare(FAN_OUT_QUERIES.queue);
    this.#newest = db.prepare(FAN_OUT_QUERIES.newest);
    this.#waiting = db.prepare(FAN_OUT_QUERIES.waiting);
    this.#advance = db.prepare(FAN_OUT_QUERIES.advance);
    this.#toNewest = db.prepare(FAN_OUT_QUERIES.toNewest);
  }

  /** True when some endpoint a step would feed (see FED; `fed`: the enabled ones) has events owed that it was not fanned out to yet. */
  behind(fed: readonly number[]): boolean {
    return this.#behind.get({ fed: JSON.stringify(fed) }) !== undefined;
  }

  /** Fans the endpoints a step feeds, owed events, out to at most `span` more events of its types (1 or more). */
  step(span: number, fed: readonly number[]): void {
    const ids = JSON.stringify(fed);
    this.#queueAndLog({ endpoint: null, span, fed: ids });
    this.#advance.run({ span, fed: ids });
  }

  /**
   * Before an endpoint's subscription changes: queues what was recorded under the old one (if it is
   * enabled, or what it is owed from before a service disable), then moves it to the newest event, so that
   * nothing recorded while it was disabled, or of a type it was not subscribed to, is sent under the new one.
   */
  settle(endpoint: number): void {
    this.#queueAndLog({ endpoint, span: null, fed: '[]' });
    this.#toNewest.run(endpoint);
  }

  /** Queues deliveries, and logs those that wait for an earlier event of their subject. */
  #queueAndLog(params: { endpoint: number | null; span: number | null; fed: string }): void {
    const after = (this.#newest.get() as { id: number }).id;
    if (this.#queue.run(params).changes > 0) this.#waiting.run({ after });
  }
}
