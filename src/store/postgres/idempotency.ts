import type pg from 'pg';
import { decideOnce, keptRow, type OnceRow, onceQueries } from '../idempotency-records.js';
import { asDate } from '../rows.js';
import { postgresParam } from '../sql-params.js';
import type { Once, OnceResult } from '../store.js';
import { lockKey } from './advisory-locks.js';
import type { Database } from './postgres-db.js';

const QUERIES = onceQueries(postgresParam);

/**
 * Runs an effect once per idempotency key on the caller's transaction (see idempotency-records.ts). A
 * transaction-level advisory lock on the key tells a duplicate still in flight (on any instance) from a retry.
 */
export async function pgOnce<T, R>(
  client: pg.ClientBase,
  once: Once<T>,
  effect: () => Promise<R>,
  kept: (result: R) => T | undefined,
): Promise<OnceResult<R>> {
  const { rows: locked } = await client.query<{ got: boolean }>(
    `SELECT pg_try_advisory_xact_lock(${lockKey('once')}, hashtext($1)) AS got`,
    [`${once.owner}:${once.key}`],
  );
  if (locked[0]?.got !== true) return { outcome: 'in_flight' };
  const { rows } = await client.query<OnceRow<Date>>(QUERIES.find, [once.owner, once.key]);
  const decision = decideOnce(rows[0], once, asDate);
  if (decision.outcome !== 'run') return decision;
  if (decision.replaceExpired) await client.query(QUERIES.remove, [once.owner, once.key]);
  const result = await effect();
  const row = keptRow(once, result, kept);
  if (row !== undefined) await client.query(QUERIES.insert, [...row.values, row.expiresAt]);
  return { outcome: 'done', result };
}

/** Removes the records that expired before `now`; returns how many. */
export async function purgeExpiredOnce(db: Database, now: Date): Promise<number> {
  return db.count('idempotency-purge', QUERIES.purge, [now]);
}
