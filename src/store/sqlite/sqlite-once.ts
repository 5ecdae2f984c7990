import type Database from 'better-sqlite3';
import type { Once, OnceResult } from '../store.js';

interface OnceRow {
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
  expires_at: number;
}

export type OnceRunner = <T, R>(once: Once<T>, effect: () => R, kept: (result: R) => T | undefined) => OnceResult<R>;

/**
 * Runs an effect at most once per (API key, idempotency key), inside the caller's transaction, so the
 * effect and the response kept for retries commit together or not at all. A live record for another
 * request is a mismatch; an expired one is replaced.
 */
export function sqliteOnceRunner(db: Database.Database): OnceRunner {
  const find = db.prepare<[number, string], OnceRow>(
    'SELECT fingerprint, status, headers, body, expires_at FROM idempotency_keys WHERE owner = ? AND key = ?',
  );
  const remove = db.prepare<[number, string]>('DELETE FROM idempotency_keys WHERE owner = ? AND key = ?');
  const insert = db.prepare<[number, string, string, number, string, string, number]>(
    `INSERT INTO idempotency_keys (owner, key, fingerprint, status, headers, body, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  return (once, effect, kept) => {
    const row = find.get(once.owner, once.key);
    if (row !== undefined && row.expires_at > once.now.getTime()) {
      if (row.fingerprint !== once.fingerprint) return { outcome: 'mismatch' };
      return {
        outcome: 'replay',
        response: { status: row.status, headers: JSON.parse(row.headers) as Record<string, string>, body: row.body },
      };
    }
    if (row !== undefined) remove.run(once.owner, once.key);
    const result = effect();
    const keep = kept(result);
    if (keep !== undefined) {
      const response = once.render(keep);
      insert.run(
        once.owner,
        once.key,
        once.fingerprint,
        response.status,
        JSON.stringify(response.headers),
        response.body,
        once.expiresAt.getTime(),
      );
    }
    return { outcome: 'done', result };
  };
}
