import { join } from 'node:path';
import { createSchema } from '../dev/postgres-admin.js';
import type { Cleanup } from './cleanup.js';
import type { StoreName } from './options.js';

/** The machine's PostgreSQL (trust auth), as the tests use it; each run works in a schema of its own. */
export const POSTGRES_URL = process.env.PETSTORE_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface FreshDatabase {
  readonly store: StoreName;
  /** DATABASE_URL for the service. */
  readonly url: string;
}

/**
 * An empty database: a file in `dir` named `name` (removed with it), or a PostgreSQL schema dropped at
 * cleanup.
 */
export async function freshDatabase(
  store: StoreName,
  dir: string,
  cleanup: Cleanup,
  name = 'sqlite',
): Promise<FreshDatabase> {
  if (store === 'sqlite') return { store, url: join(dir, `${name}.db`) };
  const schema = await createSchema(POSTGRES_URL, 'petstore_bench');
  cleanup.defer('the benchmark schema', () => schema.drop());
  return { store, url: schema.url };
}
