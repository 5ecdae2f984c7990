import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Administration of the machine's PostgreSQL for the tests and the benchmark: whether it answers, and a
 * fresh schema of its own for each user. No side effects on import (test/helpers/stores.ts has those).
 *
 * dev/ holds development-time support shared by test/ and bench/; it is type-checked and linted with them,
 * and is not part of the package (tsconfig.build.json builds src/ only, and "files" ships dist/ only).
 */

/** Why PostgreSQL at `url` cannot be used, or undefined when it can. */
export async function postgresUnreachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${url} is unreachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs one statement on a connection of its own to `url`. */
export async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new, empty schema named `<prefix>_<random>` on `url`, and the URL that puts a connection in it. */
export async function createSchema(url: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin(url, `CREATE SCHEMA ${schema}`);
  const inSchema = new URL(url);
  inSchema.searchParams.set('options', `-c search_path=${schema}`);
  return { url: inSchema.href, drop: () => admin(url, `DROP SCHEMA ${schema} CASCADE`) };
}
