import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PET_QUERIES } from '../../src/store/postgres/pets.js';
import { Database } from '../../src/store/postgres/postgres-db.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { claimEverything } from '../helpers/claims.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { BACKENDS, createPostgresSchema, postgresConfig, postgresStoreWithClient } from '../helpers/stores.js';

const skip = BACKENDS.find((backend) => backend.name === 'postgres')?.skip;

/** Substitutes literal values for $n, so EXPLAIN shows the plan for those values. */
function explainable(sql: string, values: unknown[]): string {
  return sql.replace(/\$(\d+)(::\w+)?/g, (_, n: string) => {
    const value = values[Number(n) - 1];
    return typeof value === 'string' ? `'${value}'` : String(value);
  });
}

describe('postgres store', { skip }, () => {
  test("a statement on its own that is a deadlock's victim runs again, and ends once the other side has", async (t) => {
    const schema = await createPostgresSchema();
    t.after(() => schema.drop());
    const pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    t.after(() => pool.end());
    const other = new pg.Client({ connectionString: schema.url });
    await other.connect();
    t.after(() => other.end());
    await other.query('BEGIN');
    // Its own check comes late, so the statement's, after the default 1 s, finds the deadlock: the victim.
    await other.query("SET LOCAL deadlock_timeout = '20s'");
    await other.query('SELECT pg_advisory_xact_lock(1)');
    // Takes lock 2, then waits for 1 ...
    const statement = new Database(pool).rows(
      'deadlock',
      'SELECT pg_advisory_xact_lock(2), pg_advisory_xact_lock(1)',
      [],
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // ... which waits for 2: a deadlock. Without a retry the statement fails with 40P01.
    await other.query('SELECT pg_advisory_xact_lock(2)');
    await other.query('COMMIT');
    assert.equal((await statement).length, 1);
  });

  test('the feed holds an event back while a transaction that began writing before it is open', async (t) => {
    const { store, client } = await postgresStoreWithClient(t);
    // A writer that takes no lock the store's own writes wait for (pet creates share the id-order lock).
    await client.query('BEGIN');
    await client.query(`INSERT INTO events (type, data) VALUES ('pet.created', $1)`, [
      JSON.stringify({ id: 1000, name: 'first', category_id: 1, status: 'available' }),
    ]);
    await store.pets.create({ name: 'second', categoryId: 1, status: 'available' });
    // The second pet committed, but an event that commits later could still sort before it: not shown yet.
    const early = await store.events.list({ after: undefined, limit: 10 });
    assert.deepEqual(early, { outcome: 'page', events: [] });
    assert.deepEqual(await store.events.head(), { tx: 0, seq: 0 });
    await client.query('COMMIT');
    const page = await store.events.list({ after: { tx: 0, seq: 0 }, limit: 10 });
    assert.equal(page.outcome, 'page');
    const names =
      page.outcome === 'page' ? page.events.map((event) => (event.type === 'pet.created' ? event.pet.name : '')) : [];
    assert.deepEqual(names, ['first', 'second']);
  });

  test('one event by id shows once committed, while the feed still holds it back', async (t) => {
    const { store, client } = await postgresStoreWithClient(t);
    await client.query('BEGIN');
    try {
      const [open] = (
        await client.query(`INSERT INTO events (type, data) VALUES ('pet.created', $1) RETURNING seq`, [
          JSON.stringify({ id: 1000, name: 'first', category_id: 1, status: 'available' }),
        ])
      ).rows;
      const pet = await store.pets.create({ name: 'second', categoryId: 1, status: 'available' });
      assert.deepEqual(await store.events.list({ after: undefined, limit: 10 }), { outcome: 'page', events: [] });
      const [row] = (await client.query('SELECT seq FROM events WHERE seq <> $1', [open.seq])).rows;
      const event = await store.events.get(Number(row.seq), undefined);
      assert.equal(event?.type === 'pet.created' && event.pet.id, pet.id, 'committed: shown by id');
      assert.equal(await store.events.get(Number(open.seq), undefined), undefined, 'not committed: not shown');
    } finally {
      // Ended whatever failed: the cleanup's drop of the schema would wait for it.
      await client.query('ROLLBACK');
    }
  });

  test('pages are index scans with no sort, filtered or not, on 100k pets with a rare status', async (t) => {
    // The store is opened for its migrations: the plans are of the schema it made.
    const { client } = await postgresStoreWithClient(t);
    await client.query(`INSERT INTO pets (name, category_id, status)
      SELECT 'p' || i, 1, CASE WHEN i % 10000 = 0 THEN 'sold' ELSE 'available' END FROM generate_series(1, 100000) i`);
    await client.query('ANALYZE pets');
    const plan = async (sql: string, values: unknown[]) =>
      (await client.query(`EXPLAIN ${explainable(sql, values)}`)).rows.map((row) => row['QUERY PLAN']).join('\n');
    const page = await plan(PET_QUERIES.page, [0, 21]);
    assert.match(page, /Index Scan using pets_pkey/);
    const deep = await plan(PET_QUERIES.page, [90000, 21]);
    assert.match(deep, /Index Scan using pets_pkey/);
    const rare = await plan(PET_QUERIES.pageByStatus, ['sold', 0, 21]);
    assert.match(rare, /Index Scan using pets_status_id/);
    // A status almost every pet has may walk the primary key instead: as cheap, since nearly every row matches.
    const common = await plan(PET_QUERIES.pageByStatus, ['available', 50000, 21]);
    assert.match(common, /Index Scan using (pets_status_id|pets_pkey)/);
    for (const text of [page, deep, rare, common]) assert.doesNotMatch(text, /Seq Scan|Sort/, text);
  });

  test('creates of one turn go in one batch: each caller gets its own pet, ids in the order asked', async (t) => {
    const { store, client } = await postgresStoreWithClient(t);
    const names = Array.from({ length: 120 }, (_, i) => `batch-${i}`);
    const pets = await Promise.all(
      names.map((name, i) => store.pets.create({ name, categoryId: i + 1, status: 'available' })),
    );
    assert.deepEqual(
      pets.map((pet) => [pet.name, pet.categoryId]),
      names.map((name, i) => [name, i + 1]),
      'every caller got the pet it asked for',
    );
    const ids = pets.map((pet) => pet.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'ids in the order the creates were asked',
    );
    assert.equal(new Set(ids).size, names.length);
    // Each row's xmin is the transaction that inserted it (the database-wide commit counter is flushed late).
    const { rows } = await client.query(
      `SELECT count(DISTINCT xmin::text)::int AS commits FROM pets WHERE name LIKE 'batch-%'`,
    );
    const commits = rows[0].commits as number;
    assert.ok(commits < 20, `${names.length} creates took ${commits} commits (batched, not one each)`);
  });

  test('migrations are recorded, idempotent under concurrent starts, and a newer schema is refused', async (t) => {
    const schema = await createPostgresSchema();
    t.after(() => schema.drop());
    const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresStore.open(postgresConfig(schema.url))));
    for (const store of stores) await store.close();
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    t.after(() => client.end());
    const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(
      rows,
      POSTGRES_MIGRATIONS.map((_, i) => ({ version: i + 1 })),
    );
    await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [
      POSTGRES_MIGRATIONS.length + 1,
    ]);
    await assert.rejects(PostgresStore.open(postgresConfig(schema.url)), /newer than this petstore knows/);
  });

  test('the database holds key hashes, never keys', async (t) => {
    const schema = await createPostgresSchema();
    t.after(() => schema.drop());
    const store = await PostgresStore.open(postgresConfig(schema.url));
    t.after(() => store.close());
    const { key } = await issueApiKey(store, () => new Date(), { name: 'secret-holder' });
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    t.after(() => client.end());
    const { rows } = await client.query('SELECT * FROM api_keys');
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(key));
    assert.ok(!JSON.stringify(rows).includes(key.slice(10, 30)));
  });

  test('the change token is the current snapshot: unchanged without a commit, new after any commit', async (t) => {
    const { store, client } = await postgresStoreWithClient(t);
    const before = await store.changeToken();
    await store.pets.list({ limit: 10 });
    assert.equal(await store.changeToken(), before, 'a read commits nothing');
    await client.query("INSERT INTO pets (name, category_id, status) VALUES ('x', 1, 'available')");
    const after = await store.changeToken();
    assert.notEqual(after, before, "another connection's commit");
    await client.query('BEGIN');
    await client.query("UPDATE pets SET status = 'sold'");
    await client.query('ROLLBACK');
    assert.notEqual(await store.changeToken(), after, 'an abort changes it too (never wrongly unchanged)');
  });
  test('upgraded to fan-out after the commit, each event goes out once, also one whose transaction began before', async (t) => {
    const schema = await createPostgresSchema();
    t.after(() => schema.drop());
    const connect = async () => {
      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      t.after(() => client.end());
      return client;
    };
    const [old, early] = [await connect(), await connect()];
    const triggerVersion = POSTGRES_MIGRATIONS.findIndex((migration) =>
      migration.includes('CREATE TRIGGER events_fan_out'),
    );
    await old.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)');
    for (const [i, migration] of POSTGRES_MIGRATIONS.slice(0, triggerVersion + 1).entries()) {
      await old.query(migration);
      await old.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [i + 1]);
    }
    await old.query(`INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at)
      VALUES ('https://hooks.example.com/', 'pet.created', true, 's', now())`);
    // Pets of their own (ids apart from the pet the store creates): the endpoint orders by subject.
    const event = (name: string, id: number) => [JSON.stringify({ id, name, category_id: 1, status: 'sold' })];
    // A transaction that has its id before the migration, and records its event after it ...
    await early.query('BEGIN');
    await early.query('SELECT pg_current_xact_id()');
    // ... behind an event, with a larger id, that the trigger queued.
    await old.query(`INSERT INTO events (type, data) VALUES ('pet.created', $1)`, event('queued', 101));
    assert.equal((await old.query('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0]?.n, 1);
    const store = await PostgresStore.open(postgresConfig(schema.url));
    t.after(() => store.close());
    await early.query(`INSERT INTO events (type, data) VALUES ('pet.created', $1)`, event('early', 102));
    await early.query('COMMIT');
    await store.pets.create({ name: 'after', categoryId: 1, status: 'available' });
    assert.deepEqual(
      (await claimEverything(store)).map(({ event }) => event.type === 'pet.created' && event.pet.name),
      ['queued', 'early', 'after'],
    );
  });
  test('a subscription change waits for older transactions: an event committed before it goes out as subscribed then', async (t) => {
    const { store, client } = await postgresStoreWithClient(t);
    const hook = await addEndpoint(store, {
      url: 'https://hooks.example.com/in',
      events: ['pet.created'],
      description: null,
      secret: 'whsec_c2VjcmV0',
      createdAt: new Date(),
    });
    // An older transaction, open: the pet's event commits, but sits behind it, out of the feed's reach.
    await client.query('BEGIN');
    await client.query('SELECT pg_current_xact_id()');
    const pet = await store.pets.create({ name: 'before', categoryId: 1, status: 'available' });
    const changed = store.webhooks.update(hook.id, { events: ['order.placed'] }, CLI_AUDIT);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await client.query('COMMIT');
    await changed;
    const sent = await claimEverything(store);
    assert.deepEqual(
      sent.map(({ event }) => event.type === 'pet.created' && event.pet.id),
      [pet.id],
    );
  });
});
