import type pg from 'pg';
import { lockKey } from './advisory-locks.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/**
 * Brings the schema up to date under a session advisory lock, so several instances starting at once
 * apply each migration exactly once: the others wait, then find nothing to do. Each migration runs in
 * its own transaction (PostgreSQL DDL is transactional). Returns the versions it applied.
 */
export async function migratePostgres(client: pg.ClientBase): Promise<number[]> {
  const lock = lockKey('migrations');
  await client.query(`SELECT pg_advisory_lock(${lock})`);
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)',
    );
    const { rows } = await client.query<{ version: number }>(
      'SELECT COALESCE(MAX(version), 0)::int AS version FROM schema_migrations',
    );
    const current = rows[0]?.version ?? 0;
    if (current > POSTGRES_MIGRATIONS.length) {
      throw new Error(
        `the database schema is at version ${current}, newer than this petstore knows (${POSTGRES_MIGRATIONS.length}); upgrade petstore`,
      );
    }
    const applied: number[] = [];
    for (let version = current + 1; version <= POSTGRES_MIGRATIONS.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query(POSTGRES_MIGRATIONS[version - 1] as string);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [version]);
        await client.query('COMMIT');
      } catch (error) {
        // The migration's own error is the one to report, even if the rollback fails too.
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      applied.push(version);
    }
    return applied;
  } finally {
    // If the connection is gone the lock went with it; an unlock error must not hide the real one.
    await client.query(`SELECT pg_advisory_unlock(${lock})`).catch(() => undefined);
  }
}
