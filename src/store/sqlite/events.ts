import type Database from 'better-sqlite3';
import { EXPIRED_DELIVERY_ERROR } from '../../domain/delivery-status.js';
import { type EventPosition, positionAfter } from '../../domain/event-position.js';
import type { EventPage, EventQuery, EventRecord, PurgeResult } from '../records.js';
import { type EventRow, eventFromRow, ON_FEED, SEEN_BY } from '../shared/event-rows.js';
import { pollHead } from '../shared/head-poll.js';
import { PURGE_BATCH, purgeInBatches } from '../shared/retention-batches.js';
import { fromMilliseconds } from '../shared/rows.js';
import type { EventStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import { OWED, SUBSCRIBED } from './subscribed.js';

const COLUMNS = 'seq, 0 AS tx, type, subject, at, data, previous_status';
/** The events one write of retention removes: the oldest of those recorded before @before. */
const BATCH = 'SELECT seq, type, owner FROM events WHERE at < @before ORDER BY seq LIMIT @limit';

/** Retention's statements, each over the same BATCH within one write. */
const PURGE_QUERIES = {
  /**
   * A `failed` entry in the log for each delivery of the batch still pending: those queued (numbered after
   * their last attempt), and those fan-out owes an endpoint and has not queued yet (fan-out.ts).
   */
  expire: `WITH e AS (${BATCH})
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, error, attempted_at,
      triggered_by)
    SELECT d.id, d.endpoint_id, e.seq, e.type, d.attempts + 1, 'failed', @error, @now, d.triggered_by
    FROM e JOIN webhook_deliveries d ON d.event_seq = e.seq AND d.status = 'pending'
    UNION ALL
    SELECT NULL, w.id, e.seq, e.type, 1, 'failed', @error, @now, 'event'
    FROM webhook_endpoints w JOIN e ON ${OWED} AND ${SUBSCRIBED}
    WHERE w.fanned_seq < (SELECT max(seq) FROM e)
    ORDER BY 2, 3`,
  remove: `DELETE FROM events WHERE seq IN (SELECT seq FROM (${BATCH})) RETURNING seq, ${ON_FEED} AS on_feed`,
  // To the newest removed of the feed (ON_FEED): a cursor is never at a test event.
  markPurged: 'UPDATE event_retention SET purged_seq = max(purged_seq, ?)',
  removeLog: `DELETE FROM webhook_attempts WHERE id IN
    (SELECT id FROM webhook_attempts WHERE attempted_at < @before ORDER BY attempted_at LIMIT @limit)`,
};
/**
 * How often a watch looks at the head. SQLite tells no other process of a commit, and `serve --workers`
 * processes share the file, so they look: two indexed reads of microseconds, well inside the stream's 1 s.
 */
const WATCH_INTERVAL_MS = 200;

interface PageParams {
  after: number;
  limit: number;
  owner: string | null;
  type?: string;
}

interface OneParams {
  seq: number;
  owner: string | null;
}

interface PurgeParams {
  before: number;
  now: number;
  limit: number;
  error: string;
}

/**
 * The feed on SQLite. One writer at a time commits, so seq order is commit order: an event a reader has
 * not seen yet always has a larger seq than every event it has.
 */
export class SqliteEventStore implements EventStore {
  readonly #page: Database.Statement<[PageParams], EventRow<number>>;
  readonly #pageOfType: Database.Statement<[PageParams], EventRow<number>>;
  readonly #one: Database.Statement<[OneParams], EventRow<number>>;
  readonly #newest: Database.Statement<[], number>;
  readonly #purged: Database.Statement<[], { tx: number; seq: number }>;
  readonly #cursor: Database.Statement<[{ seq: number }], { tx: number; seq: number; lost: number }>;
  readonly #expire: Database.Statement<[PurgeParams]>;
  readonly #remove: Database.Statement<[PurgeParams], { seq: number; on_feed: number }>;
  readonly #markPurged: Database.Statement<[number]>;
  readonly #removeLog: Database.Statement<[PurgeParams]>;
  readonly #writes: GroupCommit;

  constructor(db: Database.Database, writes: GroupCommit) {
    this.#writes = writes;
    const seen = SEEN_BY('@owner');
    this.#page = db.prepare(
      `SELECT ${COLUMNS} FROM events WHERE seq > @after AND ${ON_FEED} AND ${seen} ORDER BY seq LIMIT @limit`,
    );
    this.#pageOfType = db.prepare(
      `SELECT ${COLUMNS} FROM events WHERE type = @type AND seq > @after AND ${seen} ORDER BY seq LIMIT @limit`,
    );
    // By id, the feed's events only: a test send's row is there for its delivery alone.
    this.#one = db.prepare(`SELECT ${COLUMNS} FROM events WHERE seq = @seq AND ${ON_FEED} AND ${seen}`);
    // Backwards by seq to the first of the feed: max(seq) with a condition would read every row.
    this.#newest = db.prepare<[], number>(`SELECT seq FROM events WHERE ${ON_FEED} ORDER BY seq DESC LIMIT 1`).pluck();
    this.#purged = db.prepare('SELECT purged_tx AS tx, purged_seq AS seq FROM event_retention');
    // What a cursor at @seq meets, in one read: retention's position, and whether it is in the ids a history
    // lost to a restore may have handed out (restore.ts).
    this.#cursor = db.prepare(`SELECT purged_tx AS tx, purged_seq AS seq,
      EXISTS (SELECT 1 FROM event_gaps WHERE @seq > lost_after AND @seq < resumed_at) AS lost FROM event_retention`);
    this.#expire = db.prepare(PURGE_QUERIES.expire);
    this.#remove = db.prepare(PURGE_QUERIES.remove);
    this.#markPurged = db.prepare(PURGE_QUERIES.markPurged);
    this.#removeLog = db.prepare(PURGE_QUERIES.removeLog);
  }

  async list(query: EventQuery): Promise<EventPage> {
    if (query.after !== undefined) {
      const meets = this.#cursor.get({ seq: query.after.seq }) as { tx: number; seq: number; lost: number };
      if (positionAfter({ tx: meets.tx, seq: meets.seq }, query.after)) return { outcome: 'gone' };
      if (meets.lost === 1) return { outcome: 'restored' };
    }
    const params = { after: query.after?.seq ?? 0, limit: query.limit, owner: query.owner ?? null };
    const rows =
      query.type === undefined ? this.#page.all(params) : this.#pageOfType.all({ ...params, type: query.type });
    return { outcome: 'page', events: rows.map((row) => eventFromRow(row, fromMilliseconds)) };
  }

  /** A restore's gaps (event_gaps) need no check here: their ids are in no row, and none is ever handed out again. */
  async get(seq: number, owner: string | undefined): Promise<EventRecord | undefined> {
    const row = this.#one.get({ seq, owner: owner ?? null });
    return row === undefined ? undefined : eventFromRow(row, fromMilliseconds);
  }

  async head(): Promise<EventPosition> {
    const purged = this.#purgedThrough();
    const newest = this.#newest.get() ?? 0;
    return newest > purged.seq ? { tx: 0, seq: newest } : purged;
  }

  purge(before: Date, now: Date): Promise<PurgeResult> {
    const params = { before: before.getTime(), now: now.getTime(), limit: PURGE_BATCH, error: EXPIRED_DELIVERY_ERROR };
    return purgeInBatches(() =>
      this.#writes.run(() => {
        // Before the events go: their deliveries go with them (ON DELETE CASCADE), the log entries stay.
        const expired = this.#expire.run(params).changes;
        const gone = this.#remove.all(params);
        const newest = Math.max(0, ...gone.filter((row) => row.on_feed).map((row) => row.seq));
        if (newest > 0) this.#markPurged.run(newest);
        return { events: gone.length, expired, logEntries: this.#removeLog.run(params).changes };
      }),
    );
  }

  watch(onChange: () => void): () => void {
    return pollHead(() => this.head(), WATCH_INTERVAL_MS, onChange);
  }

  #purgedThrough(): EventPosition {
    return this.#purged.get() as EventPosition;
  }
}
