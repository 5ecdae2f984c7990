import type pg from 'pg';
import type { Once, OnceResult } from '../store.js';

interface OnceRow {
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
  expires_at: Date;
}

/**
 * Runs an effect at most once per (API key, idempotency key), inside the caller's transaction, so the
 * effect and the response kept for retries commit together or not at all. A transaction-level
 * advisory lock on the key tells a duplicate that is still in flight (on any instance) from a retry.
 */
export async function pgOnce<T, R>(
  client: pg.ClientBase,
  once: Once<T>,
  effect: () => Promise<R>,
  kept: (result: R) => T | undefined,
): Promise<OnceResult<R>> {
  const { rows: locked } = await client.query<{ got: boolean }>(
    `SELECT pg_try_advisory_xact_lock(hashtext(coalesce(current_schema(), '') || '.petstore.once'), hashtext($1)) AS got`,
    [`${once.owner}:${once.key}`],
  );
  if (locked[0]?.got !== true) return { outcome: 'in_flight' };
  const { rows } = await client.query<OnceRow>(
    'SELECT fingerprint, status, headers, body, expires_at FROM idempotency_keys WHERE owner = $1 AND key = $2',
    [once.owner, once.key],
  );
  const row = rows[0];
  if (row !== undefined && row.expires_at > once.now) {
    if (row.fingerprint !== once.fingerprint) return { outcome: 'mismatch' };
    return {
      outcome: 'replay',
      response: { status: row.status, headers: JSON.parse(row.headers) as Record<string, string>, body: row.body },
    };
  }
  if (row !== undefined) {
    await client.query('DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2', [once.owner, once.key]);
  }
  const result = await effect();
  const keep = kept(result);
  if (keep !== undefined) {
    const response = once.render(keep);
    await client.query(
      `INSERT INTO idempotency_keys (owner, key, fingerprint, status, headers, body, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        once.owner,
        once.key,
        once.fingerprint,
        response.status,
        JSON.stringify(response.headers),
        response.body,
        once.expiresAt,
      ],
    );
  }
  return { outcome: 'done', result };
}
