import type Database from 'better-sqlite3';
import { type EventPosition, positionAfter } from '../../domain/event-position.js';
import type { EventPage, EventQuery } from '../records.js';
import { type EventRow, eventFromRow } from '../shared/event-rows.js';
import { pollHead } from '../shared/head-poll.js';
import { fromMilliseconds } from '../shared/rows.js';
import type { EventStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';

const COLUMNS = 'seq, 0 AS tx, type, at, data, previous_status';
/** Events removed per transaction by retention, so a large purge never holds the write lock for long. */
const PURGE_BATCH = 5000;
/**
 * How often a watch looks at the head. SQLite tells no other process of a commit, and `serve --workers`
 * processes share the file, so they look: two indexed reads of microseconds, well inside the stream's 1 s.
 */
const WATCH_INTERVAL_MS = 200;

/**
 * The feed on SQLite. One writer at a time commits, so seq order is commit order: an event a reader has
 * not seen yet always has a larger seq than every event it has.
 */
export class SqliteEventStore implements EventStore {
  readonly #page: Database.Statement<[number, number], EventRow<number>>;
  readonly #pageOfType: Database.Statement<[string, number, number], EventRow<number>>;
  readonly #newest: Database.Statement<[], number | null>;
  readonly #purged: Database.Statement<[], { tx: number; seq: number }>;
  readonly #purgeBatch: Database.Statement<[number, number], { seq: number }>;
  readonly #markPurged: Database.Statement<[number]>;
  readonly #writes: GroupCommit;

  constructor(db: Database.Database, writes: GroupCommit) {
    this.#writes = writes;
    this.#page = db.prepare(`SELECT ${COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?`);
    this.#pageOfType = db.prepare(`SELECT ${COLUMNS} FROM events WHERE type = ? AND seq > ? ORDER BY seq LIMIT ?`);
    this.#newest = db.prepare<[], number | null>('SELECT max(seq) FROM events').pluck();
    this.#purged = db.prepare('SELECT purged_tx AS tx, purged_seq AS seq FROM event_retention');
    this.#purgeBatch = db.prepare(
      'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < ? ORDER BY seq LIMIT ?) RETURNING seq',
    );
    this.#markPurged = db.prepare('UPDATE event_retention SET purged_seq = max(purged_seq, ?)');
  }

  async list(query: EventQuery): Promise<EventPage> {
    if (query.after !== undefined && positionAfter(this.#purgedThrough(), query.after)) return { outcome: 'gone' };
    const after = query.after?.seq ?? 0;
    const rows =
      query.type === undefined
        ? this.#page.all(after, query.limit)
        : this.#pageOfType.all(query.type, after, query.limit);
    return { outcome: 'page', events: rows.map((row) => eventFromRow(row, fromMilliseconds)) };
  }

  async head(): Promise<EventPosition> {
    const purged = this.#purgedThrough();
    const newest = this.#newest.get() ?? 0;
    return newest > purged.seq ? { tx: 0, seq: newest } : purged;
  }

  async purge(before: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const batch = await this.#writes.run(() => {
        const gone = this.#purgeBatch.all(before.getTime(), PURGE_BATCH);
        const newest = Math.max(0, ...gone.map((row) => row.seq));
        if (newest > 0) this.#markPurged.run(newest);
        return gone.length;
      });
      removed += batch;
      if (batch < PURGE_BATCH) return removed;
    }
  }

  watch(onChange: () => void): () => void {
    return pollHead(() => this.head(), WATCH_INTERVAL_MS, onChange);
  }

  #purgedThrough(): EventPosition {
    return this.#purged.get() as EventPosition;
  }
}
