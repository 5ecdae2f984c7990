import type Database from 'better-sqlite3';
import { moving, parseStartLog, type StartGrant, type StartLogChange, taking } from '../../domain/start-window.js';
import type { HeldBackDelivery } from '../records.js';
import type { EndpointStartStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';

const QUERIES = {
  read: 'SELECT starts FROM webhook_endpoint_starts WHERE endpoint_id = ?',
  write: `INSERT INTO webhook_endpoint_starts (endpoint_id, starts) VALUES (?, ?)
    ON CONFLICT (endpoint_id) DO UPDATE SET starts = excluded.starts`,
  // As finish() moves a delivery on, but with no attempt counted or logged: due again at @until.
  holdBack: `UPDATE webhook_deliveries SET next_attempt_at = @until, claimed_until = NULL
    WHERE id = @id AND claimed_until = @claimedUntil AND status = 'pending'`,
};

/**
 * Rate limits on SQLite: a take reads and writes the endpoint's log in one write of the group commit, under
 * the file's write lock, so the processes of `serve --workers` sharing the file take starts one at a time.
 */
export class SqliteEndpointStartStore implements EndpointStartStore {
  readonly #read: Database.Statement<[number], { starts: string }>;
  readonly #write: Database.Statement<[number, string]>;
  readonly #holdBack: Database.Statement<[{ id: number; claimedUntil: number; until: number }]>;
  readonly #writes: GroupCommit;

  constructor(db: Database.Database, writes: GroupCommit) {
    this.#writes = writes;
    this.#read = db.prepare(QUERIES.read);
    this.#write = db.prepare(QUERIES.write);
    this.#holdBack = db.prepare(QUERIES.holdBack);
  }

  take(endpointId: number, limit: number, wanted: number): Promise<StartGrant> {
    return this.#change(endpointId, taking(limit, wanted));
  }

  made(endpointId: number, grant: StartGrant, from: number, madeAt: number): Promise<void> {
    return this.#change(endpointId, moving(grant, from, madeAt));
  }

  async holdBack(deliveries: readonly HeldBackDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.#writes.run(() => {
      for (const { delivery, until } of deliveries) {
        const values = { id: delivery.id, claimedUntil: delivery.claimedUntil.getTime(), until: until.getTime() };
        this.#holdBack.run(values);
      }
    });
  }

  /** One write of the group commit: the endpoint's log read, changed, written if it changed. */
  #change<T>(endpointId: number, change: StartLogChange<T>): Promise<T> {
    return this.#writes.run(() => {
      const before = parseStartLog(this.#read.get(endpointId)?.starts);
      const { log, result } = change(before);
      if (log !== before) this.#write.run(endpointId, JSON.stringify(log));
      return result;
    });
  }
}
