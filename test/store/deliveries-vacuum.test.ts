import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { DeliveriesVacuum } from '../../src/store/postgres/deliveries-vacuum.js';
import { Database } from '../../src/store/postgres/postgres-db.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { BACKENDS, createPostgresSchema, postgresConfig } from '../helpers/stores.js';

const skip = BACKENDS.find((backend) => backend.name === 'postgres')?.skip;

/** A migrated schema, a pool on it, and how many times webhook_deliveries has been vacuumed by hand. */
async function migratedSchema(t: test.TestContext) {
  const schema = await createPostgresSchema();
  t.after(() => schema.drop());
  await (await PostgresStore.open(postgresConfig(schema.url))).close();
  const pool = new pg.Pool({ connectionString: schema.url, max: 2 });
  t.after(() => pool.end());
  const vacuums = async () =>
    Number(
      (
        await pool.query<{ n: string }>(
          `SELECT vacuum_count AS n FROM pg_stat_user_tables WHERE relid = to_regclass('webhook_deliveries')`,
        )
      ).rows[0]?.n,
    );
  return { schema, pool, vacuums };
}

describe('deliveries vacuum [postgres]', { skip }, () => {
  test('webhook_deliveries is vacuumed once 2,000 deliveries were recorded, then not again within its gap', async (t) => {
    const { pool, vacuums } = await migratedSchema(t);
    let now = 1_000_000;
    const vacuum = new DeliveriesVacuum(new Database(pool), () => now);
    assert.equal(vacuum.recorded(1_999), undefined, 'not yet');
    await vacuum.recorded(1);
    assert.equal(await vacuums(), 1);
    assert.equal(vacuum.recorded(2_000), undefined, 'within a second of the last');
    now += 1_000;
    await vacuum.recorded(0);
    assert.equal(await vacuums(), 2, 'the count kept, and the gap over');
  });

  test('a database user that may not vacuum the table sends no VACUUM', async (t) => {
    const { schema, pool, vacuums } = await migratedSchema(t);
    const role = `petstore_vacuum_${randomBytes(6).toString('hex')}`;
    const schemaName = (await pool.query<{ name: string }>('SELECT current_schema() AS name')).rows[0]?.name as string;
    await pool.query(`CREATE ROLE ${role} LOGIN`);
    await pool.query(`GRANT USAGE ON SCHEMA ${schemaName} TO ${role}`);
    const url = new URL(schema.url);
    url.username = role;
    const reader = new pg.Pool({ connectionString: url.href, max: 1 });
    // What the server says to it: a VACUUM it may not run is a warning ("skipping ..."), not an error.
    const notices: string[] = [];
    reader.on('connect', (client) => client.on('notice', (notice) => notices.push(String(notice.message))));
    // After the schema's own clean-up (hooks run in the order added), on a connection of its own.
    t.after(async () => {
      await reader.end();
      const admin = new pg.Client({ connectionString: schema.url });
      await admin.connect();
      await admin.query(`DROP OWNED BY ${role}`);
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    });
    let now = 1_000_000;
    const vacuum = new DeliveriesVacuum(new Database(reader), () => now);
    await vacuum.recorded(2_000);
    assert.equal(await vacuums(), 0);
    assert.deepEqual(notices, []);
    now += 3_600_000;
    assert.equal(vacuum.recorded(2_000), undefined, 'nor asks again, however long after');
  });
});
