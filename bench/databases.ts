import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import type { Cleanup } from './cleanup.js';
import type { StoreName } from './options.js';

/** The machine's PostgreSQL (trust auth), as the tests use it; each run works in a schema of its own. */
export const POSTGRES_URL = process.env.PETSTORE_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface FreshDatabase {
  readonly store: StoreName;
  /** DATABASE_URL for the service. */
  readonly url: string;
}

/** Why PostgreSQL cannot be used, or undefined when it can. */
export async function postgresUnreachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${POSTGRES_URL} is unreachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** An empty database: a file in `dir` (removed with it), or a PostgreSQL schema dropped at cleanup. */
export async function freshDatabase(store: StoreName, dir: string, cleanup: Cleanup): Promise<FreshDatabase> {
  if (store === 'sqlite') return { store, url: join(dir, 'sqlite.db') };
  const schema = `petstore_bench_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE SCHEMA ${schema}`);
  cleanup.defer(`schema ${schema}`, () => admin(`DROP SCHEMA ${schema} CASCADE`));
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { store, url: url.href };
}
