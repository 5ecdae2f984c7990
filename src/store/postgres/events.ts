import type { PostgresDatabaseConfig } from '../../config/database-url.js';
import { EXPIRED_DELIVERY_ERROR } from '../../domain/delivery-status.js';
import { type EventPosition, positionAfter } from '../../domain/event-position.js';
import type { EventPage, EventQuery, EventRecord, PurgeResult } from '../records.js';
import { type EventRow, eventFromRow, ON_FEED, SEEN_BY } from '../shared/event-rows.js';
import { pollHead } from '../shared/head-poll.js';
import { PURGE_BATCH, type PurgeBatch, purgeInBatches } from '../shared/retention-batches.js';
import { asDate } from '../shared/rows.js';
import type { EventStore } from '../store.js';
import { listenForEvents } from './event-notices.js';
import type { Database } from './postgres-db.js';
import { OWED, SUBSCRIBED } from './subscribed.js';

/**
 * Only transactions that have ended: every transaction with an id below the snapshot's xmin has committed
 * or rolled back, and every later one gets a larger id, so no event can still appear below this line.
 */
export const ENDED = 'tx < pg_snapshot_xmin(pg_current_snapshot())';
const COLUMNS = 'seq, tx::text::bigint AS tx, type, subject, at, data, previous_status';
const AFTER = '(tx, seq) > ($1::text::xid8, $2)';

const QUERIES = {
  page: `SELECT ${COLUMNS} FROM events WHERE ${AFTER} AND ${ENDED} AND ${ON_FEED} AND ${SEEN_BY('$4::text')}
    ORDER BY tx, seq LIMIT $3`,
  pageOfType: `SELECT ${COLUMNS} FROM events WHERE ${AFTER} AND ${ENDED} AND type = $5 AND ${SEEN_BY('$4::text')}
    ORDER BY tx, seq LIMIT $3`,
  /**
   * One event by id, without ENDED: that line keeps a page from passing an event whose transaction may still
   * commit before it, and a lookup hands out no position to pass anything. A row it can read is committed
   * (it would also be shown by the feed once older transactions end). Nor do a restore's gaps (event_gaps)
   * matter: no row has an id in one, and none is handed out again.
   */
  one: `SELECT ${COLUMNS} FROM events WHERE seq = $1 AND ${ON_FEED} AND ${SEEN_BY('$2::text')}`,
  newest: `SELECT tx::text::bigint AS tx, seq FROM events WHERE ${ENDED} AND ${ON_FEED}
    ORDER BY tx DESC, seq DESC LIMIT 1`,
  purged: 'SELECT purged_tx AS tx, purged_seq AS seq FROM event_retention',
  /**
   * What a cursor at ($1 tx, $2 seq) meets besides the page: retention's position; whether it is in history
   * a restore lost (event_gaps); and, for a cursor from before a restore (a transaction id, an id below
   * the restore's floor), where it is now (restored.ts moved restored events to (0, seq)): just before
   * the first event after it in the old order, so nothing is skipped.
   */
  cursor: `SELECT r.purged_tx AS tx, r.purged_seq AS seq,
      EXISTS (SELECT FROM event_gaps g WHERE $2 > g.lost_after AND $2 < g.resumed_at) AS lost,
      CASE WHEN $1::text::bigint > 0 AND $2 < (SELECT max(resumed_at) FROM event_gaps) THEN coalesce(
        (SELECT min(e.seq) - 1 FROM events e WHERE (e.tx_before_restore, e.seq) > ($1::text::xid8, $2)),
        (SELECT max(lost_after) FROM event_gaps)) END AS now_seq
    FROM event_retention r`,
  /**
   * One write of retention: the oldest $2 events recorded before $1 (`e`) go, with their deliveries (ON
   * DELETE CASCADE). They are locked first, passing over those another instance's purge, or a fan-out
   * queueing their deliveries, holds (the next purge takes them), so no two purges judge one event. Each of
   * their deliveries still pending gets a `failed` entry in the log, made at $3 with the error $4: those
   * queued (locked, so one an attempt is recording now is judged on its outcome; numbered after their last
   * attempt), and those fan-out owes an endpoint and has not queued yet (fan-out.ts). The marker
   * moves to the newest of them on the feed (ON_FEED). Then the log's oldest $2 entries of attempts made
   * before $1 go.
   */
  purge: `WITH e AS (
      SELECT tx, seq, type, owner FROM events WHERE at < $1 AND ${ENDED} ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED
    ),
    last AS (SELECT tx, seq FROM e ORDER BY tx DESC, seq DESC LIMIT 1),
    pending AS (
      SELECT d.id, d.endpoint_id, e.seq, e.type, d.attempts + 1 AS attempt, d.triggered_by
      FROM e JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE d.status = 'pending' FOR UPDATE OF d
    ),
    owed AS (
      SELECT NULL::bigint AS id, w.id AS endpoint_id, e.seq, e.type, 1 AS attempt, 'event' AS triggered_by
      FROM last, webhook_endpoints w JOIN e ON ${OWED} AND ${SUBSCRIBED}
      WHERE (w.fanned_tx, w.fanned_seq) < (last.tx, last.seq)
    ),
    expired AS (
      INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, error, attempted_at,
        triggered_by)
      SELECT id, endpoint_id, seq, type, attempt, 'failed', $4, $3, triggered_by
      FROM (SELECT * FROM pending UNION ALL SELECT * FROM owed) x ORDER BY endpoint_id, seq
      RETURNING 1
    ),
    gone AS (DELETE FROM events WHERE seq IN (SELECT seq FROM e) RETURNING tx::text::bigint AS tx, seq, type),
    newest AS (SELECT tx, seq FROM gone WHERE ${ON_FEED} ORDER BY tx DESC, seq DESC LIMIT 1),
    marked AS (UPDATE event_retention SET purged_tx = newest.tx, purged_seq = newest.seq FROM newest
      WHERE (newest.tx, newest.seq) > (purged_tx, purged_seq)),
    log AS (DELETE FROM webhook_attempts WHERE id IN
      (SELECT id FROM webhook_attempts WHERE attempted_at < $1 ORDER BY attempted_at LIMIT $2) RETURNING 1)
    SELECT (SELECT count(*) FROM gone)::int AS events, (SELECT count(*) FROM expired)::int AS expired,
      (SELECT count(*) FROM log)::int AS "logEntries"`,
};
/**
 * How often a watch looks at the head besides listening: it covers a listener that is down, and an event
 * its notice woke streams for too early, shown only once an older transaction without events ended.
 */
const WATCH_INTERVAL_MS = 500;

/** The feed on PostgreSQL, in (tx, seq) order: see the events table's migration and docs/decisions/feed-order-without-a-lock.md. */
/** QUERIES.cursor's answer. */
interface CursorFacts {
  tx: number;
  seq: number;
  lost: boolean;
  now_seq: string | number | null;
}

export class PostgresEventStore implements EventStore {
  readonly #db: Database;
  readonly #config: PostgresDatabaseConfig;

  constructor(db: Database, config: PostgresDatabaseConfig) {
    this.#db = db;
    this.#config = config;
  }

  async list(query: EventQuery): Promise<EventPage> {
    let after = query.after;
    if (after !== undefined) {
      const [meets] = await this.#db.rows<CursorFacts>('events-cursor', QUERIES.cursor, [String(after.tx), after.seq]);
      if (meets?.lost === true) return { outcome: 'restored' };
      if (meets?.now_seq != null) after = { tx: 0, seq: Number(meets.now_seq) };
      if (meets !== undefined && positionAfter({ tx: Number(meets.tx), seq: Number(meets.seq) }, after)) {
        return { outcome: 'gone' };
      }
    }
    const values = [String(after?.tx ?? 0), after?.seq ?? 0, query.limit, query.owner ?? null];
    const rows =
      query.type === undefined
        ? await this.#db.rows<EventRow<Date>>('events-page', QUERIES.page, values)
        : await this.#db.rows<EventRow<Date>>('events-page-of-type', QUERIES.pageOfType, [...values, query.type]);
    return { outcome: 'page', events: rows.map((row) => eventFromRow(row, asDate)) };
  }

  async get(seq: number, owner: string | undefined): Promise<EventRecord | undefined> {
    const [row] = await this.#db.rows<EventRow<Date>>('events-one', QUERIES.one, [seq, owner ?? null]);
    return row === undefined ? undefined : eventFromRow(row, asDate);
  }

  async head(): Promise<EventPosition> {
    const [newest] = await this.#db.rows<{ tx: number; seq: number }>('events-newest', QUERIES.newest, []);
    const purged = await this.#purgedThrough();
    return newest !== undefined && positionAfter(newest, purged) ? { tx: newest.tx, seq: newest.seq } : purged;
  }

  purge(before: Date, now: Date): Promise<PurgeResult> {
    return purgeInBatches(async () => {
      const values = [before, PURGE_BATCH, now, EXPIRED_DELIVERY_ERROR];
      const [row] = await this.#db.rows<PurgeBatch>('events-purge', QUERIES.purge, values);
      return row ?? { events: 0, expired: 0, logEntries: 0 };
    });
  }

  watch(onChange: () => void): () => void {
    const stopListening = listenForEvents(this.#config, onChange);
    const stopPolling = pollHead(() => this.head(), WATCH_INTERVAL_MS, onChange);
    return () => {
      stopListening();
      stopPolling();
    };
  }

  async #purgedThrough(): Promise<EventPosition> {
    const [row] = await this.#db.rows<{ tx: number; seq: number }>('events-purged', QUERIES.purged, []);
    return row ?? { tx: 0, seq: 0 };
  }
}
