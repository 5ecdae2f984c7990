import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, type TestContext, test } from 'node:test';
import pg from 'pg';
import { eventually } from '../../dev/eventually.js';
import { createKey, runCli } from '../../dev/petstore-cli.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { type CallOptions, request } from '../helpers/calls.js';
import { cliEnv, firstKey, startServe } from '../helpers/process.js';
import { isStream, openStream } from '../helpers/sse-client.js';
import { BACKENDS, createPostgresSchema, postgresConfig } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * The operator manual's least-privilege set-up (docs/operations.md), for real: `petstore migrate` as the
 * tables' owner, then its grants (read from the page, so it stays true) to a login role of its own, and the service run as that
 * role through every kind of statement it makes.
 */

const skip = BACKENDS.find((backend) => backend.name === 'postgres')?.skip;

/** The grants in the operator manual's PostgreSQL section, for the service's user `petstore` in schema `public`. */
function manualGrants(): string[] {
  const manual = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const block = /```sql\n([\s\S]*?)```/.exec(manual.slice(manual.indexOf('### PostgreSQL')))?.[1];
  assert.ok(block !== undefined, "docs/operations.md's PostgreSQL section lists its grants in a sql block");
  const lines = block.split('\n').filter((line) => line.trim() !== '');
  for (const line of lines) assert.match(line, /^(GRANT|ALTER DEFAULT PRIVILEGES) [^;]+ TO petstore;$/);
  return lines;
}

interface Deployment {
  /** The owner's connection, in the schema. */
  readonly admin: pg.Client;
  /** The owner's DATABASE_URL (the test's superuser). */
  readonly ownerUrl: string;
  /** The service's DATABASE_URL: the new role, in the same schema. */
  readonly serviceUrl: string;
  readonly schema: string;
  /** Applies the manual's grants to the service's role, as the owner. */
  grant(): Promise<void>;
}

/** A fresh schema and a login role with no rights in it; both are removed after the test. */
async function deployment(t: TestContext): Promise<Deployment> {
  const schema = await createPostgresSchema();
  const role = `petstore_lp_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: schema.url });
  await admin.connect();
  await admin.query(`CREATE ROLE ${role} LOGIN`);
  t.after(async () => {
    await schema.drop();
    // Revokes what the role was granted in this database (default privileges included), then drops it.
    await admin.query(`DROP OWNED BY ${role}`);
    await admin.query(`DROP ROLE ${role}`);
    await admin.end();
  });
  const schemaName = (await admin.query<{ name: string }>('SELECT current_schema() AS name')).rows[0]?.name as string;
  const service = new URL(schema.url);
  service.username = role;
  // The machine's server trusts 127.0.0.1: the role logs in without a password. Check that it is this role.
  const probe = new pg.Client({ connectionString: service.href });
  await probe.connect();
  const { rows } = await probe.query<{ user: string }>('SELECT current_user AS user');
  await probe.end();
  assert.equal(rows[0]?.user, role);
  return {
    admin,
    ownerUrl: schema.url,
    serviceUrl: service.href,
    schema: schemaName,
    async grant() {
      for (const line of manualGrants()) {
        await admin.query(line.replace(/\bpublic\b/g, schemaName).replace(/\bpetstore;$/, `${role};`));
      }
    },
  };
}

/**
 * The one line a service that may not migrate prints, for a schema at `version`: PostgreSQL's reason is
 * the schema for a migration that creates, the table's owner for one that alters a table.
 */
function refusal(version: number, schema: string): RegExp {
  return new RegExp(
    `^petstore: the database schema is at version ${version} and this petstore needs version ` +
      `${POSTGRES_MIGRATIONS.length}, but this database user may not change the schema ` +
      `\\((permission denied for schema ${schema}|must be owner of table \\w+)\\): ` +
      'run `petstore migrate` as its owner \\(a user with CREATE on the schema\\), then start again\\n$',
  );
}

describe('PostgreSQL with the least privileges the operator manual grants', { skip }, () => {
  test('the service runs every operation with exactly the grants the manual gives', async (t) => {
    const db = await deployment(t);
    const migrated = await runCli(['migrate'], cliEnv(db.ownerUrl));
    assert.equal(migrated.code, 0, migrated.stderr);
    await db.grant();
    const env = cliEnv(db.serviceUrl, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms' });

    // An up-to-date schema is only read: migrate and serve need no DDL right.
    const again = await runCli(['migrate'], env);
    assert.deepEqual(
      [again.code, again.stdout],
      [0, `postgres schema up to date (version ${POSTGRES_MIGRATIONS.length})\n`],
    );
    const server = await startServe(t, env);
    const key = await firstKey(server);
    const call = (method: string, path: string, options: CallOptions = {}) =>
      request(server.url, method, path, options, key);
    const ok = async (method: string, path: string, status: number, options: CallOptions = {}) => {
      const result = await call(method, path, options);
      assert.equal(result.status, status, `${method} ${path}: ${result.text}`);
      return result.json;
    };

    const receiver = await startReceiver(t);
    const hook = await ok('POST', '/v1/webhooks', 201, { body: { url: `${receiver.url}/hooks` } });
    await ok('GET', '/v1/webhooks', 200);
    await ok('PATCH', `/v1/webhooks/${hook.id}`, 200, { body: { description: 'least privilege' } });
    await ok('GET', `/v1/webhooks/${hook.id}`, 200);

    const opened = await openStream(server.url, '/v1/events', { key });
    assert.ok(isStream(opened), 'the live feed opens');
    const stream = opened;
    t.after(() => stream.close());

    // An idempotent create, and its replay.
    const once = { body: { name: 'Least', categoryId: 1 }, headers: { 'idempotency-key': 'lp-1' } };
    const pet = await ok('POST', '/v1/pets', 201, once);
    assert.deepEqual(await ok('POST', '/v1/pets', 201, once), pet);
    await ok('GET', `/v1/pets/${pet.id}`, 200);
    await ok('GET', '/v1/pets?limit=5', 200);
    const order = await ok('POST', '/v1/store/orders', 201, { body: { petId: pet.id } });
    await ok('PATCH', `/v1/store/orders/${order.id}`, 200, { body: { status: 'approved' } });
    await ok('PATCH', `/v1/store/orders/${order.id}`, 200, { body: { status: 'delivered' } });
    await ok('GET', `/v1/store/orders/${order.id}`, 200);
    await ok('GET', '/v1/store/orders', 200);

    const feed = await ok('GET', '/v1/events?limit=100', 200);
    assert.ok(feed.length >= 4, JSON.stringify(feed));
    await stream.waitForEvents(feed.length, 5000);
    await receiver.until((got) => got.length >= feed.length, 10_000);
    const log = await eventually(
      'every event delivered and logged',
      async () => {
        const attempts = await ok('GET', `/v1/webhooks/${hook.id}/deliveries`, 200);
        // Entries of deliveries that waited for an earlier event of their pet are no attempts.
        const made = attempts.filter((a: { waitingFor?: string }) => a.waitingFor === undefined);
        return made.length >= feed.length && made.every((a: { status: string }) => a.status === 'succeeded')
          ? made
          : undefined;
      },
      { timeoutMs: 10_000 },
    );
    assert.equal(log.length, feed.length);
    await ok('DELETE', `/v1/webhooks/${hook.id}`, 204);

    // The key commands, as the service's user.
    const second = await createKey(env, 'second');
    assert.equal((await call('GET', '/v1/pets', { key: second })).status, 200);
    const listed = await runCli(['keys', 'list'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const revoked = await runCli(['keys', 'revoke', 'second'], env);
    assert.equal(revoked.code, 0, revoked.stderr);

    // The periodic purges (at start and every 10 minutes in a server): expired idempotency records, events past retention.
    const store = await PostgresStore.open(postgresConfig(db.serviceUrl));
    t.after(() => store.close());
    const later = new Date(Date.now() + 400 * 24 * 3600 * 1000);
    assert.ok((await store.purgeExpiredIdempotencyKeys(later)) >= 1);
    assert.deepEqual(await store.events.purge(later, later), { events: feed.length, expired: 0 });

    stream.close();
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    assert.doesNotMatch(server.stdout() + server.stderr(), /permission denied/i);
  });

  test('a schema behind this petstore: a user that may not migrate refuses to start, in one line', async (t) => {
    const db = await deployment(t);
    // Never migrated: the grants on an empty schema.
    await db.grant();
    const env = cliEnv(db.serviceUrl);
    for (const command of ['serve', 'migrate']) {
      const result = await runCli([command], env);
      assert.equal(result.code, 1, result.stdout);
      assert.match(result.stderr, refusal(0, db.schema));
    }

    // Migrated by the owner: the default privileges granted the service the new tables.
    assert.equal((await runCli(['migrate'], cliEnv(db.ownerUrl))).code, 0);
    assert.match((await runCli(['migrate'], env)).stdout, /^postgres schema up to date/);
    // One migration behind, as before an upgrade.
    await db.admin.query('DELETE FROM schema_migrations WHERE version = $1', [POSTGRES_MIGRATIONS.length]);
    const behind = await runCli(['serve'], env);
    assert.equal(behind.code, 1, behind.stdout);
    assert.match(behind.stderr, refusal(POSTGRES_MIGRATIONS.length - 1, db.schema));
  });
});
