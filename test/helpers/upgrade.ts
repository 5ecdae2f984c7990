import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { createPostgresSchema, postgresConfig } from './stores.js';
import { tempDir } from './temp-dir.js';

/**
 * A database as the release before a migration left it, opened (and so migrated) by this build: every
 * migration before the first that contains `marker`, then `statements` (in the backend's own SQL), written
 * the way that release would have.
 */
export type OpenBefore = (t: TestContext, marker: string, statements: readonly string[]) => Promise<Store>;

function before(migrations: readonly string[], marker: string): readonly string[] {
  const first = migrations.findIndex((migration) => migration.includes(marker));
  assert.ok(first > 0, `a migration contains ${marker}`);
  return migrations.slice(0, first);
}

const sqliteBefore: OpenBefore = async (t, marker, statements) => {
  const path = join(tempDir(t), 'before.db');
  const db = new Database(path);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (const [i, migration] of before(SQLITE_MIGRATIONS, marker).entries()) {
    db.exec(migration);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(i + 1);
  }
  for (const statement of statements) db.exec(statement);
  db.close();
  const store = SqliteStore.open(path);
  t.after(() => store.close());
  return store;
};

const postgresBefore: OpenBefore = async (t, marker, statements) => {
  const schema = await createPostgresSchema();
  t.after(() => schema.drop());
  const client = new pg.Client({ connectionString: schema.url });
  await client.connect();
  await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)');
  for (const [i, migration] of before(POSTGRES_MIGRATIONS, marker).entries()) {
    await client.query(migration);
    await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [i + 1]);
  }
  for (const statement of statements) await client.query(statement);
  await client.end();
  const store = await PostgresStore.open(postgresConfig(schema.url));
  t.after(() => store.close());
  return store;
};

export const OPEN_BEFORE: Readonly<Record<'sqlite' | 'postgres', OpenBefore>> = {
  sqlite: sqliteBefore,
  postgres: postgresBefore,
};
