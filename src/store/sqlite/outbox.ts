import type Database from 'better-sqlite3';
import type { EventType } from '../../domain/event-types.js';
import type { ChangeTrace } from '../change-trace.js';
import type { OrderRow, PetRow } from '../shared/rows.js';
import type { EndpointEventRow } from '../shared/webhook-rows.js';

/**
 * The outbox's write side on SQLite: a write records its events with this, inside its own transaction, so
 * they commit with the change or not at all. Their webhook deliveries are queued after the commit (fan-out.ts).
 */
export class SqliteOutbox {
  readonly #insert: Database.Statement<[string, number, string, string | null, string | null]>;
  readonly #trace: ChangeTrace;

  /** `trace` is read as each write runs: the group commit runs it in the context it was asked for in. */
  constructor(db: Database.Database, trace: ChangeTrace) {
    this.#insert = db.prepare('INSERT INTO events (type, at, data, previous_status, trace) VALUES (?, ?, ?, ?, ?)');
    this.#trace = trace;
  }

  /** Records one event: the changed row as it is now (no secrets), and the status it had before, for a status change. */
  record(
    type: EventType,
    row: PetRow | OrderRow<number> | EndpointEventRow<number>,
    previousStatus: string | null = null,
  ): void {
    this.#insert.run(type, Date.now(), JSON.stringify(row), previousStatus, this.#trace());
  }
}
