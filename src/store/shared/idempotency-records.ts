import type { Once, OnceResult } from '../once-records.js';
import type { ToDate } from './rows.js';
import type { Param } from './sql-params.js';

/**
 * Idempotency records, the same on both backends: an effect runs at most once per (API key, idempotency
 * key), inside the caller's transaction, so the effect and the response kept for retries commit together
 * or not at all. Each backend reads (PostgreSQL: claims) the key's row, follows decideOnce, and stores
 * keptRow's values.
 */
export function onceQueries(param: Param) {
  const byKey = `owner = ${param(1)} AND key = ${param(2)}`;
  const values = [1, 2, 3, 4, 5, 6, 7].map(param).join(', ');
  return {
    find: `SELECT fingerprint, status, headers, body, expires_at FROM idempotency_keys WHERE ${byKey}`,
    remove: `DELETE FROM idempotency_keys WHERE ${byKey}`,
    insert: `INSERT INTO idempotency_keys (owner, key, fingerprint, status, headers, body, expires_at) VALUES (${values})`,
    purge: `DELETE FROM idempotency_keys WHERE expires_at <= ${param(1)}`,
  };
}

/** A key's row, as the driver returns it. */
export interface OnceRow<D> {
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
  expires_at: D;
}

export type OnceDecision =
  | Extract<OnceResult<never>, { outcome: 'mismatch' | 'replay' }>
  | { readonly outcome: 'run'; readonly replaceExpired: boolean };

/**
 * What a key's row means for this request: a live row for the same request is replayed, one for another
 * request is a mismatch; with no row the effect runs, and an expired row is replaced.
 */
export function decideOnce<D>(row: OnceRow<D> | undefined, once: Once<unknown>, toDate: ToDate<D>): OnceDecision {
  if (row === undefined) return { outcome: 'run', replaceExpired: false };
  if (toDate(row.expires_at).getTime() <= once.now.getTime()) return { outcome: 'run', replaceExpired: true };
  if (row.fingerprint !== once.fingerprint) return { outcome: 'mismatch' };
  return {
    outcome: 'replay',
    response: { status: row.status, headers: JSON.parse(row.headers) as Record<string, string>, body: row.body },
  };
}

/**
 * The row to insert after the effect: `values` up to body, then `expiresAt`, which each backend binds as it
 * keeps dates. undefined when `kept` says the result is not remembered: a refused order wrote nothing.
 */
export function keptRow<T, R>(once: Once<T>, result: R, kept: (result: R) => T | undefined) {
  const keep = kept(result);
  if (keep === undefined) return undefined;
  const response = once.render(keep);
  return {
    values: [once.owner, once.key, once.fingerprint, response.status, JSON.stringify(response.headers), response.body],
    expiresAt: once.expiresAt,
  };
}
