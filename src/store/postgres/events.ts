import type { PostgresDatabaseConfig } from '../../config/database-url.js';
import { type EventPosition, positionAfter } from '../../domain/event-position.js';
import type { EventPage, EventQuery } from '../records.js';
import { type EventRow, eventFromRow } from '../shared/event-rows.js';
import { pollHead } from '../shared/head-poll.js';
import { asDate } from '../shared/rows.js';
import type { EventStore } from '../store.js';
import { listenForEvents } from './event-notices.js';
import type { Database } from './postgres-db.js';

/**
 * Only transactions that have ended: every transaction with an id below the snapshot's xmin has committed
 * or rolled back, and every later one gets a larger id, so no event can still appear below this line.
 */
export const ENDED = 'tx < pg_snapshot_xmin(pg_current_snapshot())';
const COLUMNS = 'seq, tx::text::bigint AS tx, type, at, data, previous_status';
const AFTER = '(tx, seq) > ($1::text::xid8, $2)';

const QUERIES = {
  page: `SELECT ${COLUMNS} FROM events WHERE ${AFTER} AND ${ENDED} ORDER BY tx, seq LIMIT $3`,
  pageOfType: `SELECT ${COLUMNS} FROM events WHERE ${AFTER} AND ${ENDED} AND type = $4 ORDER BY tx, seq LIMIT $3`,
  newest: `SELECT tx::text::bigint AS tx, seq FROM events WHERE ${ENDED} ORDER BY tx DESC, seq DESC LIMIT 1`,
  purged: 'SELECT purged_tx AS tx, purged_seq AS seq FROM event_retention',
  purge: `WITH gone AS (
      DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < $1 AND ${ENDED} ORDER BY at LIMIT $2)
      RETURNING tx::text::bigint AS tx, seq),
    newest AS (SELECT tx, seq FROM gone ORDER BY tx DESC, seq DESC LIMIT 1),
    marked AS (UPDATE event_retention SET purged_tx = newest.tx, purged_seq = newest.seq FROM newest
      WHERE (newest.tx, newest.seq) > (purged_tx, purged_seq))
    SELECT count(*)::int AS removed FROM gone`,
};

/** Events removed per statement by retention, so a large purge never holds its locks for long. */
const PURGE_BATCH = 5000;
/**
 * How often a watch looks at the head besides listening: it covers a listener that is down, and an event
 * its notice woke streams for too early, shown only once an older transaction without events ended.
 */
const WATCH_INTERVAL_MS = 500;

/** The feed on PostgreSQL, in (tx, seq) order: see the events table's migration and docs/decisions.md. */
export class PostgresEventStore implements EventStore {
  readonly #db: Database;
  readonly #config: PostgresDatabaseConfig;

  constructor(db: Database, config: PostgresDatabaseConfig) {
    this.#db = db;
    this.#config = config;
  }

  async list(query: EventQuery): Promise<EventPage> {
    const after = query.after;
    if (after !== undefined && positionAfter(await this.#purgedThrough(), after)) return { outcome: 'gone' };
    const values = [String(after?.tx ?? 0), after?.seq ?? 0, query.limit];
    const rows =
      query.type === undefined
        ? await this.#db.rows<EventRow<Date>>('events-page', QUERIES.page, values)
        : await this.#db.rows<EventRow<Date>>('events-page-of-type', QUERIES.pageOfType, [...values, query.type]);
    return { outcome: 'page', events: rows.map((row) => eventFromRow(row, asDate)) };
  }

  async head(): Promise<EventPosition> {
    const [newest] = await this.#db.rows<{ tx: number; seq: number }>('events-newest', QUERIES.newest, []);
    const purged = await this.#purgedThrough();
    return newest !== undefined && positionAfter(newest, purged) ? { tx: newest.tx, seq: newest.seq } : purged;
  }

  async purge(before: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const [row] = await this.#db.rows<{ removed: number }>('events-purge', QUERIES.purge, [before, PURGE_BATCH]);
      const batch = row?.removed ?? 0;
      removed += batch;
      if (batch < PURGE_BATCH) return removed;
    }
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
