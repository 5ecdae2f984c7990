import type pg from 'pg';
import type { Once, OnceResult } from '../once-records.js';
import { decideOnce, keptRow, type OnceDecision, type OnceRow, onceQueries } from '../shared/idempotency-records.js';
import { asDate } from '../shared/rows.js';
import { postgresParam } from '../shared/sql-params.js';
import type { Database } from './postgres-db.js';

const QUERIES = onceQueries(postgresParam);

/** Claims a key nobody holds: the placeholder row is replaced or removed before the transaction commits. */
const CLAIM = `INSERT INTO idempotency_keys (owner, key, fingerprint, status, headers, body, expires_at)
  VALUES ($1, $2, $3, 0, '', '', $4) ON CONFLICT (owner, key) DO NOTHING`;
const KEEP = `UPDATE idempotency_keys SET fingerprint = $3, status = $4, headers = $5, body = $6, expires_at = $7
  WHERE owner = $1 AND key = $2`;

/**
 * A once-transaction waits at most this long for any lock: the key's row held by a duplicate, or an
 * id-order lock. It holds what it gets across round trips to this process, so without the bound the
 * transactions of a stopped instance, each waiting its turn, would hand the id-order lock on to each
 * other and stop every instance's writes for one idle_in_transaction_session_timeout each (see
 * connections.ts). Shorter than that time-out, they give up before the first holder is ended. The
 * client sees 503 and may retry: it sent an Idempotency-Key.
 */
const ONCE_LOCK_TIMEOUT_MS = 500;

/**
 * The key's row, made this transaction's: inserted as a claim, or found and locked (FOR UPDATE). A
 * duplicate in flight holds the row (its insert is not committed yet), so this waits for its transaction
 * and then decides on what it committed. The exact key is the lock: two keys never collide.
 */
async function claim(client: pg.ClientBase, once: Once<unknown>): Promise<OnceDecision> {
  for (;;) {
    const claimed = await client.query(CLAIM, [once.owner, once.key, once.fingerprint, once.expiresAt]);
    if (claimed.rowCount === 1) return { outcome: 'run', replaceExpired: false };
    const { rows } = await client.query<OnceRow<Date>>(`${QUERIES.find} FOR UPDATE`, [once.owner, once.key]);
    // Gone between the two statements (purged, or a refused duplicate removed it): claim it again.
    if (rows[0] !== undefined) return decideOnce(rows[0], once, asDate);
  }
}

/**
 * Runs an effect once per idempotency key, in one transaction with the key's record (see
 * idempotency-records.ts): the effect and the response kept for retries commit together or not at all.
 */
export async function pgOnce<T, R>(
  db: Database,
  once: Once<T>,
  effect: (client: pg.ClientBase) => Promise<R>,
  kept: (result: R) => T | undefined,
): Promise<OnceResult<R>> {
  return db.transaction(
    async (client) => {
      const decision = await claim(client, once);
      if (decision.outcome !== 'run') return decision;
      const result = await effect(client);
      const row = keptRow(once, result, kept);
      if (row === undefined) await client.query(QUERIES.remove, [once.owner, once.key]);
      else await client.query(KEEP, [...row.values, row.expiresAt]);
      return { outcome: 'done', result };
    },
    { lockTimeoutMs: ONCE_LOCK_TIMEOUT_MS },
  );
}

/** Removes the records that expired before `now`; returns how many. */
export async function purgeExpiredOnce(db: Database, now: Date): Promise<number> {
  return db.count('idempotency-purge', QUERIES.purge, [now]);
}
