import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createSchema, postgresUnreachable } from '../../dev/postgres-admin.js';
import type { PostgresDatabaseConfig } from '../../src/config/database-url.js';
import type { ChangeTrace } from '../../src/store/change-trace.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { createPgCluster, pgClusterUnavailable } from './pg-cluster.js';

/** A fresh, empty store of one kind; `dispose` closes it and removes everything it made. */
export interface StoreFixture {
  readonly store: Store;
  /** Opens a second, independent connection to the same database (another instance), recording `trace`. */
  reopen(trace?: ChangeTrace): Promise<Store>;
  /** Runs one SQL statement on its own connection, for rows no API writes; resolves with the rows it returns. */
  sql(text: string): Promise<Record<string, unknown>[]>;
  dispose(): Promise<void>;
}

export interface StoreBackend {
  readonly name: 'sqlite' | 'postgres';
  /** Why this backend's tests are skipped on this machine, if they are. */
  readonly skip?: string;
  create(): Promise<StoreFixture>;
}

const sqlite: StoreBackend = {
  name: 'sqlite',
  async create() {
    // A fixture has no test context of its own: dispose() removes the directory.
    const dir = mkdtempSync(join(tmpdir(), 'petstore-test-'));
    const path = join(dir, 'petstore.db');
    const opened: Store[] = [SqliteStore.open(path)];
    return {
      store: opened[0] as Store,
      async reopen(trace) {
        const store = SqliteStore.open(path, undefined, trace);
        opened.push(store);
        return store;
      },
      async sql(text) {
        const db = new Database(path);
        try {
          const statement = db.prepare<[], Record<string, unknown>>(text);
          if (statement.reader) return statement.all();
          statement.run();
          return [];
        } finally {
          db.close();
        }
      },
      async dispose() {
        for (const store of opened) await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** The machine's PostgreSQL (trust auth, database `test`). */
const MACHINE_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const CHOSEN_POSTGRES = process.env.PETSTORE_TEST_POSTGRES_URL;
/**
 * Test files run at once, and PostgreSQL's snapshots span a whole server: a transaction that one file holds
 * open holds back what the feed and the webhooks of every other file may see, and its waits. So unless
 * PETSTORE_TEST_POSTGRES_URL names a server, each test process gets a private one, made on first use, where
 * the machine can make one (root and the server binaries); else the machine's own.
 */
const PRIVATE_POSTGRES = CHOSEN_POSTGRES === undefined && pgClusterUnavailable() === undefined;
let postgresServer: Promise<string> | undefined;

/** The URL of this test process's PostgreSQL server (see PRIVATE_POSTGRES). */
export function postgresUrl(): Promise<string> {
  postgresServer ??= PRIVATE_POSTGRES ? privateCluster() : Promise.resolve(CHOSEN_POSTGRES ?? MACHINE_POSTGRES);
  return postgresServer;
}

async function privateCluster(): Promise<string> {
  const cluster = await createPgCluster();
  cluster.destroyAfter(process.pid);
  return cluster.url;
}

/** A new, empty schema of its own, and the URL that puts a connection in it. */
export async function createPostgresSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  return createSchema(await postgresUrl(), 'petstore_test');
}

export function postgresConfig(url: string): PostgresDatabaseConfig {
  return { kind: 'postgres', url, poolSize: 5, connectTimeoutMs: 3000, queryTimeoutMs: 5000 };
}

/** A PostgreSQL store on a fresh schema, and a plain client on the same schema to look underneath it. */
export async function postgresStoreWithClient(t: TestContext): Promise<{ store: PostgresStore; client: pg.Client }> {
  const schema = await createPostgresSchema();
  t.after(() => schema.drop());
  const store = await PostgresStore.open(postgresConfig(schema.url));
  t.after(() => store.close());
  const client = new pg.Client({ connectionString: schema.url });
  await client.connect();
  t.after(() => client.end());
  return { store, client };
}

const postgresSkip = PRIVATE_POSTGRES ? undefined : await postgresUnreachable(CHOSEN_POSTGRES ?? MACHINE_POSTGRES);
if (postgresSkip !== undefined && process.env.CI === 'true') {
  throw new Error(`${postgresSkip}; under CI=true the PostgreSQL half must run`);
}

const postgres: StoreBackend = {
  name: 'postgres',
  ...(postgresSkip === undefined ? {} : { skip: postgresSkip }),
  async create() {
    const schema = await createPostgresSchema();
    const opened: Store[] = [await PostgresStore.open(postgresConfig(schema.url))];
    return {
      store: opened[0] as Store,
      async reopen(trace) {
        const store = await PostgresStore.open(postgresConfig(schema.url), trace);
        opened.push(store);
        return store;
      },
      async sql(text) {
        const client = new pg.Client({ connectionString: schema.url });
        await client.connect();
        try {
          return (await client.query(text)).rows;
        } finally {
          await client.end();
        }
      },
      async dispose() {
        for (const store of opened) await store.close();
        await schema.drop();
      },
    };
  },
};

/** Every store the black-box and contract suites run against. */
export const BACKENDS: readonly StoreBackend[] = [sqlite, postgres];

/**
 * Runs `fn` once per store backend. A backend this machine lacks shows as one skipped test with the reason:
 * a test, not a suite, because node's summary counts skipped tests only (`# skipped 0` hid the half).
 */
export function eachBackend(fn: (backend: StoreBackend) => void): void {
  for (const backend of BACKENDS) {
    if (backend.skip === undefined) fn(backend);
    else test(`[${backend.name}] every test of this file`, { skip: backend.skip }, () => undefined);
  }
}
