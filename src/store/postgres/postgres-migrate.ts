import type pg from 'pg';
import { lockKey } from './advisory-locks.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/** PostgreSQL's SQLSTATE for a privilege the session's role lacks (`permission denied for …`). */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * The schema's version, read without writing anything: 0 when the schema has no migrations table yet.
 * `to_regclass` needs no privilege on the table; reading the version needs SELECT on it.
 */
async function schemaVersion(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  if (rows[0]?.present !== true) return 0;
  const versions = await client.query<{ version: number }>(
    'SELECT COALESCE(MAX(version), 0)::int AS version FROM schema_migrations',
  );
  const version = versions.rows[0]?.version ?? 0;
  if (version > POSTGRES_MIGRATIONS.length) {
    throw new Error(
      `the database schema is at version ${version}, newer than this petstore knows (${POSTGRES_MIGRATIONS.length}); upgrade petstore`,
    );
  }
  return version;
}

/**
 * Brings the schema up to date. An up-to-date schema is only read, so a role with no DDL rights (the
 * docs/operations.md's least-privilege set-up) starts; a schema behind is migrated under a session advisory lock, so
 * several instances starting at once apply each migration exactly once: the others wait, then find
 * nothing to do. Each migration runs in its own transaction (PostgreSQL DDL is transactional). Returns
 * the versions it applied.
 */
export async function migratePostgres(client: pg.ClientBase): Promise<number[]> {
  if ((await schemaVersion(client)) === POSTGRES_MIGRATIONS.length) return [];
  const lock = lockKey('migrations');
  await client.query(`SELECT pg_advisory_lock(${lock})`);
  try {
    const current = await schemaVersion(client);
    const applied: number[] = [];
    for (let version = current + 1; version <= POSTGRES_MIGRATIONS.length; version++) {
      await applyMigration(client, version).catch((error: unknown) => {
        throw explainPrivilege(error, current);
      });
      applied.push(version);
    }
    return applied;
  } finally {
    // If the connection is gone the lock went with it; an unlock error must not hide the real one.
    await client.query(`SELECT pg_advisory_unlock(${lock})`).catch(() => undefined);
  }
}

async function applyMigration(client: pg.ClientBase, version: number): Promise<void> {
  await client.query('BEGIN');
  try {
    if (version === 1) {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)',
      );
    }
    await client.query(POSTGRES_MIGRATIONS[version - 1] as string);
    await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [version]);
    await client.query('COMMIT');
  } catch (error) {
    // The migration's own error is the one to report, even if the rollback fails too.
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * A schema behind this petstore, and a role that may not change it: say so in one line that names the
 * command to run and the right that is missing, rather than PostgreSQL's bare `permission denied`.
 */
function explainPrivilege(error: unknown, current: number): unknown {
  if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) return error;
  return new Error(
    `the database schema is at version ${current} and this petstore needs version ${POSTGRES_MIGRATIONS.length}, ` +
      `but this database user may not change the schema (${(error as Error).message}): ` +
      'run `petstore migrate` as its owner (a user with CREATE on the schema), then start again',
  );
}
