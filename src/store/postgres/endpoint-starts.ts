import { moving, parseStartLog, type StartGrant, type StartLogChange, taking } from '../../domain/start-window.js';
import type { HeldBackDelivery } from '../records.js';
import type { EndpointStartStore } from '../store.js';
import type { Database } from './postgres-db.js';

const QUERIES = {
  // Creates the endpoint's row the first time, and locks it either way (DO UPDATE takes the row's lock):
  // instances taking starts for one endpoint wait for each other until commit, and read the log as it is.
  lock: `INSERT INTO webhook_endpoint_starts (endpoint_id, starts) VALUES ($1, '[]')
    ON CONFLICT (endpoint_id) DO UPDATE SET starts = webhook_endpoint_starts.starts RETURNING starts`,
  write: 'UPDATE webhook_endpoint_starts SET starts = $2 WHERE endpoint_id = $1',
  // As finish() moves a delivery on, but with no attempt counted or logged: due again at its time.
  holdBack: `UPDATE webhook_deliveries d SET next_attempt_at = h.until, claimed_until = NULL
    FROM unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[]) AS h (id, claimed_until, until)
    WHERE d.id = h.id AND d.claimed_until = h.claimed_until AND d.status = 'pending'`,
};

/** Rate limits on PostgreSQL: a take is one short transaction holding the endpoint's row of starts. */
export class PostgresEndpointStartStore implements EndpointStartStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  take(endpointId: number, limit: number, wanted: number): Promise<StartGrant> {
    // The time once the lock is held: takes of one endpoint are logged in the order they held it.
    return this.#change(endpointId, taking(limit, wanted));
  }

  made(endpointId: number, grant: StartGrant, from: number, madeAt: number): Promise<void> {
    return this.#change(endpointId, moving(grant, from, madeAt));
  }

  async holdBack(deliveries: readonly HeldBackDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.#db.count('endpoint-starts-hold-back', QUERIES.holdBack, [
      deliveries.map(({ delivery }) => delivery.id),
      deliveries.map(({ delivery }) => delivery.claimedUntil),
      deliveries.map(({ until }) => until),
    ]);
  }

  /** One short transaction holding the endpoint's row of starts: its log read, changed, written if it changed. */
  #change<T>(endpointId: number, change: StartLogChange<T>): Promise<T> {
    return this.#db.transaction(async (client) => {
      const locked = await client.query<{ starts: string }>({
        name: 'endpoint-starts-lock',
        text: QUERIES.lock,
        values: [endpointId],
      });
      const before = parseStartLog(locked.rows[0]?.starts);
      const { log, result } = change(before);
      if (log !== before) {
        await client.query({
          name: 'endpoint-starts-write',
          text: QUERIES.write,
          values: [endpointId, JSON.stringify(log)],
        });
      }
      return result;
    });
  }
}
