import { type DueDeliveryRow, dueDeliveries, dueFromRow, inFlightJson } from '../delivery-rows.js';
import type { AttemptOutcome, ClaimQuery, DeliveryStats, DeliveryStore, DueDelivery } from '../delivery-store.js';
import { asDate } from '../rows.js';
import type { Database } from './postgres-db.js';

/** Still claimable: checked again on the row's newest version once it is locked (READ COMMITTED re-check). */
const CLAIMABLE = `d.status = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until < $1)`;
const DUE = dueDeliveries({
  now: '$1',
  perEndpoint: '$4',
  inFlight: 'coalesce(($3::jsonb ->> d.endpoint_id::text)::int, 0)',
  enabled: 'w.enabled',
});

/**
 * One statement claims the due deliveries (see dueDeliveries); rows another instance is claiming right now
 * are skipped (SKIP LOCKED), never waited for.
 */
const QUERIES = {
  claim: `WITH due AS (${DUE}),
    picked AS (
      SELECT d.id FROM webhook_deliveries d JOIN due ON due.id = d.id
      WHERE due.slot <= $4 AND ${CLAIMABLE}
      ORDER BY due.next_attempt_at, d.id LIMIT $5
      FOR UPDATE OF d SKIP LOCKED
    ),
    claimed AS (
      UPDATE webhook_deliveries d SET claimed_until = $2 FROM picked WHERE d.id = picked.id
      RETURNING d.id, d.attempts, d.endpoint_id, d.event_seq
    )
    SELECT c.id AS delivery_id, c.attempts, c.endpoint_id, w.url, w.secret,
      e.seq, e.tx::text::bigint AS tx, e.type, e.at, e.data, e.previous_status
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.seq = c.event_seq`,
  finish: `WITH moved AS (
      UPDATE webhook_deliveries SET status = $3, attempts = $4, next_attempt_at = $5, claimed_until = NULL
      WHERE id = $1 AND claimed_until = $2 AND status = 'pending'
      RETURNING id, endpoint_id, event_seq
    )
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, response_status,
      error, attempted_at, next_attempt_at)
    SELECT id, endpoint_id, event_seq, $6, $4, $3, $7, $8, $9, $5 FROM moved`,
  stats: `SELECT count(*)::int AS pending, min(e.at) AS oldest FROM webhook_deliveries d
    JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.enabled
    JOIN events e ON e.seq = d.event_seq
    WHERE d.status = 'pending'`,
};

/** Deliveries on PostgreSQL: any number of instances claim from one table without sending one twice. */
export class PostgresDeliveryStore implements DeliveryStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async claim(query: ClaimQuery): Promise<DueDelivery[]> {
    if (query.limit <= 0) return [];
    const claimedUntil = new Date(query.now.getTime() + query.leaseMs);
    const rows = await this.#db.rows<DueDeliveryRow<Date>>('deliveries-claim', QUERIES.claim, [
      query.now,
      claimedUntil,
      inFlightJson(query.inFlight),
      query.perEndpoint,
      query.limit,
    ]);
    return rows.map((row) => dueFromRow(row, claimedUntil, asDate));
  }

  async finish(outcome: AttemptOutcome): Promise<boolean> {
    const { delivery } = outcome;
    const logged = await this.#db.count('deliveries-finish', QUERIES.finish, [
      delivery.id,
      delivery.claimedUntil,
      outcome.status,
      delivery.attempt,
      outcome.nextAttemptAt ?? null,
      delivery.event.type,
      outcome.responseStatus ?? null,
      outcome.error ?? null,
      outcome.attemptedAt,
    ]);
    return logged === 1;
  }

  async stats(now: Date): Promise<DeliveryStats> {
    const [row] = await this.#db.rows<{ pending: number; oldest: Date | null }>('deliveries-stats', QUERIES.stats, []);
    const oldest = row?.oldest ?? null;
    const oldestPendingSeconds = oldest === null ? 0 : Math.max(0, (now.getTime() - oldest.getTime()) / 1000);
    return { pending: row?.pending ?? 0, oldestPendingSeconds };
  }
}
