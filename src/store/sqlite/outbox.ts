import type Database from 'better-sqlite3';
import type { EventType } from '../../domain/event-types.js';
import type { OrderRow, PetRow } from '../shared/rows.js';
import type { EndpointEventRow } from '../shared/webhook-rows.js';

/**
 * The outbox's write side on SQLite: a write records its events with this, inside its own transaction, so
 * they commit with the change or not at all. Their webhook deliveries are queued after the commit (fan-out.ts).
 */
export class SqliteOutbox {
  readonly #insert: Database.Statement<[string, number, string, string | null]>;

  constructor(db: Database.Database) {
    this.#insert = db.prepare('INSERT INTO events (type, at, data, previous_status) VALUES (?, ?, ?, ?)');
  }

  /** Records one event: the changed row as it is now (no secrets), and the status it had before, for a status change. */
  record(
    type: EventType,
    row: PetRow | OrderRow<number> | EndpointEventRow<number>,
    previousStatus: string | null = null,
  ): void {
    this.#insert.run(type, Date.now(), JSON.stringify(row), previousStatus);
  }
}
