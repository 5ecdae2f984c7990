import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { admin, createSchema } from '../../dev/postgres-admin.js';
import { IN_INDEX_ORDER, DELIVERY_QUERIES as POSTGRES_QUERIES } from '../../src/store/postgres/deliveries.js';
import { FAN_OUT_QUERIES as POSTGRES_FAN_OUT } from '../../src/store/postgres/fan-out.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { READ_PER_QUEUED } from '../../src/store/shared/fan-out-reach.js';
import { DELIVERY_QUERIES as SQLITE_QUERIES } from '../../src/store/sqlite/deliveries.js';
import { FAN_OUT_QUERIES, SqliteFanOut } from '../../src/store/sqlite/fan-out.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { BACKENDS, postgresConfig, postgresUrl } from '../helpers/stores.js';

/**
 * A claim and the delivery stats at a backlog of 100k pending deliveries for one endpoint (after 100k
 * delivered ones): served by the pending indexes, reading what a claim returns, never the backlog.
 */

const BACKLOG = 100_000;
const PET = JSON.stringify({ id: 1, name: 'p', category_id: 1, status: 'available' });

describe('delivery plans [sqlite]', () => {
  const db = new Database(':memory:');
  for (const migration of SQLITE_MIGRATIONS) db.exec(migration);
  db.exec(`INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at)
    VALUES ('https://a.example.com/', 'pet.created', 1, 's', 0), ('https://b.example.com/', 'pet.created', 0, 's', 0)`);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${2 * BACKLOG})
    INSERT INTO events (type, at, data) SELECT 'pet.created', i, '${PET}' FROM n`);
  // Queued as fan-out queues them: to the enabled endpoint, which is then fanned out to the newest event.
  db.exec(`INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at, subject)
    SELECT seq, 1, 'pending', at, 'pet/' || seq FROM events;
    UPDATE webhook_endpoints SET fanned_seq = ${2 * BACKLOG} WHERE id = 1`);
  db.exec(`UPDATE webhook_deliveries SET status = 'succeeded' WHERE event_seq <= ${BACKLOG}`);
  const plan = (sql: string) =>
    (
      db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all({ endpoint: 1, now: 3 * BACKLOG, limit: 16, ordered: 1, fed: '[1, 2]' }) as {
        detail: string;
      }[]
    )
      .map((row) => row.detail)
      .join(' | ');

  test('a claim probes each endpoint through webhook_deliveries_due, in order, with no sort', () => {
    const due = plan(SQLITE_QUERIES.due);
    assert.match(due, /SEARCH d USING INDEX webhook_deliveries_due \(endpoint_id=\? AND next_attempt_at<\?\)/, due);
    assert.doesNotMatch(due, /SCAN|TEMP B-TREE/, due);
    const claimed = plan(SQLITE_QUERIES.claimed.replaceAll('?', "'[1]'"));
    assert.doesNotMatch(claimed, /SCAN (d|e|w)\b/, claimed);
    // Each delivery's subject is looked up once, through its index: is an earlier one of it pending?
    assert.match(
      due,
      /SEARCH b USING COVERING INDEX webhook_deliveries_subject \(endpoint_id=\? AND subject=\? AND event_seq<\?\)/,
      due,
    );
    const query = { endpoint: 1, now: 3 * BACKLOG, limit: 16, ordered: 1 };
    const rows = db.prepare(SQLITE_QUERIES.due).all(query) as { id: number }[];
    assert.equal(rows.length, 16);
    assert.equal(rows[0]?.id, BACKLOG + 1, "the endpoint's oldest due pending delivery first");
    // Of a paused endpoint only its untried test sends: none here, found without reading the backlog.
    const tests = plan(SQLITE_QUERIES.firstTests);
    assert.match(tests, /SEARCH d USING INDEX webhook_deliveries_first_test \(endpoint_id=\?\)/, tests);
    assert.doesNotMatch(tests, /SCAN|TEMP B-TREE/, tests);
    assert.deepEqual(db.prepare(SQLITE_QUERIES.firstTests).all({ endpoint: 1, now: 3 * BACKLOG, limit: 16 }), []);
  });

  test('stats count the index and find the oldest pending event by seq, with no scan of deliveries or events', () => {
    const stats = plan(SQLITE_QUERIES.stats);
    assert.match(stats, /USING COVERING INDEX webhook_deliveries_endpoint \(endpoint_id=\? AND status=\?\)/, stats);
    assert.match(stats, /SEARCH e USING INTEGER PRIMARY KEY/, stats);
    assert.doesNotMatch(stats, /SCAN (d|e)\b/, stats);
    assert.deepEqual(db.prepare(SQLITE_QUERIES.stats).get(), { pending: BACKLOG, oldest: BACKLOG + 1 });
  });

  test("fan-out reads each endpoint's span of events by seq; the newest seq is one probe", () => {
    const queue = (
      db.prepare(`EXPLAIN QUERY PLAN ${FAN_OUT_QUERIES.queue}`).all({ endpoint: null, span: 16, fed: '[1, 2]' }) as {
        detail: string;
      }[]
    )
      .map((row) => row.detail)
      .join(' | ');
    assert.match(queue, /SCAN w .*SEARCH e USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/, queue);
    const behind = plan(FAN_OUT_QUERIES.behind);
    assert.doesNotMatch(behind, /SCAN events/, behind);
    // The disabled endpoint, enabled at position 0: one step queues the 16 events after it, and moves it on;
    // the other endpoint is at the newest event already.
    db.exec('UPDATE webhook_endpoints SET enabled = 1 WHERE id = 2');
    const before = db.prepare('SELECT count(*) FROM webhook_deliveries').pluck().get();
    const fanOut = new SqliteFanOut(db);
    fanOut.step(16, [1, 2]);
    assert.deepEqual(
      db.prepare('SELECT min(event_seq) AS first, count(*) AS n FROM webhook_deliveries WHERE endpoint_id = 2').get(),
      { first: 1, n: 16 },
    );
    assert.equal(db.prepare('SELECT count(*) FROM webhook_deliveries').pluck().get(), Number(before) + 16);
    const positions = () => db.prepare('SELECT fanned_seq FROM webhook_endpoints ORDER BY id').pluck().all();
    assert.deepEqual(positions(), [2 * BACKLOG, 16]);
    // Retention removed the events after it but the newest 20: a step goes to the next 16 there are.
    db.exec(`DELETE FROM events WHERE seq > 16 AND seq <= ${2 * BACKLOG - 20}`);
    fanOut.step(16, [1, 2]);
    const queued = db.prepare(`SELECT count(*) AS n, min(event_seq) AS first, max(event_seq) AS last
      FROM webhook_deliveries WHERE endpoint_id = 2`);
    assert.deepEqual(queued.get(), { n: 32, first: 1, last: 2 * BACKLOG - 4 });
    // Settling one endpoint takes it to the newest event, however many there are after it.
    db.exec(`UPDATE webhook_endpoints SET fanned_seq = 0 WHERE id = 2; DELETE FROM webhook_deliveries WHERE endpoint_id = 2;
      INSERT INTO events (type, at, data) SELECT 'pet.created', seq, data FROM events WHERE seq <= 16`);
    fanOut.settle(2);
    assert.deepEqual(queued.get(), { n: 16 + 20 + 16, first: 1, last: 2 * BACKLOG + 16 });
    assert.deepEqual(positions(), [2 * BACKLOG, 2 * BACKLOG + 16]);
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
const describeNode = (node: PlanNode) =>
  `${node['Node Type']} ${node['Relation Name'] ?? ''} ${node['Index Name'] ?? ''} rows=${node['Actual Rows']} loops=${node['Actual Loops']}`;

const skip = BACKENDS.find((backend) => backend.name === 'postgres')?.skip;

/** `url` with its database changed to `database` (its options, such as the search_path, kept). */
function inDatabase(url: string, database: string): string {
  const changed = new URL(url);
  changed.pathname = `/${database}`;
  return changed.href;
}

describe('delivery plans [postgres]', { skip }, () => {
  /**
   * The backlog is built once, about 5 s of PostgreSQL's CPU, into a database of its own that is then closed
   * to connections (so autovacuum leaves it as built: no statistics, its dead tuples in place), and each test
   * gets a copy of it (CREATE DATABASE … TEMPLATE copies it page by page): the same as a backlog built for it.
   */
  let template: Promise<{ server: string; name: string; schemaUrl: string }> | undefined;
  after(async () => {
    const built = await template?.catch(() => undefined);
    if (built !== undefined) await admin(built.server, `DROP DATABASE ${built.name}`);
  });

  async function buildTemplate() {
    const server = await postgresUrl();
    const name = `petstore_plans_${randomBytes(6).toString('hex')}`;
    await admin(server, `CREATE DATABASE ${name}`);
    const schema = await createSchema(inDatabase(server, name), 'petstore_test');
    // The store is opened for its migrations: the plans are of the schema it made.
    const store = await PostgresStore.open(postgresConfig(schema.url));
    const client = new pg.Client({ connectionString: schema.url });
    try {
      await client.connect();
      await fill(client);
    } finally {
      await client.end();
      await store.close();
    }
    await admin(server, `ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    return { server, name, schemaUrl: schema.url };
  }

  async function fill(client: pg.Client) {
    await client.query(`INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at, fanned_tx, fanned_seq)
      VALUES ('https://a.example.com/', 'pet.created', true, 's', now(), '0', 0),
        ('https://b.example.com/', 'pet.created', false, 's', now(), '0', 0)`);
    await client.query(`INSERT INTO events (type, data) SELECT 'pet.created', $1 FROM generate_series(1, $2::int)`, [
      PET,
      2 * BACKLOG,
    ]);
    // Queued as fan-out queues them: to the enabled endpoint, which is then fanned out to the newest event.
    await client.query(`INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at, subject)
      SELECT seq, 1, 'pending', at, 'pet/' || seq FROM events;
      UPDATE webhook_endpoints SET (fanned_tx, fanned_seq) = (SELECT tx, seq FROM events ORDER BY tx DESC, seq DESC LIMIT 1)
      WHERE id = 1`);
    await client.query(`UPDATE webhook_deliveries SET status = 'succeeded' WHERE event_seq <= $1`, [BACKLOG]);
  }

  /** A copy of the backlog for this test, a store on it and a plain client to look underneath it. */
  async function backlog(t: TestContext) {
    template ??= buildTemplate();
    const { server, name, schemaUrl } = await template;
    const copy = `petstore_plans_${randomBytes(6).toString('hex')}`;
    await admin(server, `CREATE DATABASE ${copy} TEMPLATE ${name}`);
    const url = inDatabase(schemaUrl, copy);
    // Hooks run in the order they were added, and a database cannot be dropped while a connection is open.
    const closes: (() => Promise<void>)[] = [];
    t.after(async () => {
      for (const close of closes) await close();
      await admin(server, `DROP DATABASE ${copy}`);
    });
    const store = await PostgresStore.open(postgresConfig(url));
    closes.push(() => store.close());
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closes.push(() => client.end());
    const [{ id }] = (await client.query('SELECT id FROM webhook_endpoints WHERE enabled')).rows;
    /** Runs `sql` under EXPLAIN ANALYZE as the store does, in a transaction rolled back: every node, with what it read. */
    const analyze = async (sql: string, values: unknown[]) => {
      await client.query('BEGIN');
      try {
        if (sql === POSTGRES_QUERIES.claim)
          for (const setting of IN_INDEX_ORDER) await client.query(`SET LOCAL ${setting}`);
        const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values);
        const [explained] = rows[0]['QUERY PLAN'];
        assert.equal(explained.JIT, undefined, 'compiled (JIT): hundreds of ms for a claim');
        return nodes(explained.Plan as PlanNode);
      } finally {
        await client.query('ROLLBACK');
      }
    };
    return { store, client, endpoint: Number(id), analyze };
  }

  const claimValues = (free: Record<number, number>) => {
    const now = new Date(Date.now() + 60_000);
    return [now, new Date(now.getTime() + 60_000), JSON.stringify(free), 16, 64, 0, []];
  };

  function readsOfDeliveries(plan: PlanNode[]): PlanNode[] {
    const reads = plan.filter(
      (node) => node['Relation Name'] === 'webhook_deliveries' && node['Node Type'] !== 'ModifyTable',
    );
    const scans = plan.filter(
      (node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] !== 'webhook_endpoints',
    );
    assert.deepEqual(scans, [], plan.map(describeNode).join('\n'));
    return reads;
  }

  /**
   * A claim's reads of deliveries: through the due index, through the test sends' one, through the subject
   * index (is an earlier event of the subject pending?), and the others.
   */
  function byIndex(reads: PlanNode[]) {
    const named = (name: string) => reads.filter((node) => node['Index Name'] === name);
    const due = named('webhook_deliveries_due');
    assert.equal(due.length, 1, reads.map(describeNode).join('\n'));
    const tests = named('webhook_deliveries_first_test');
    const subject = named('webhook_deliveries_subject');
    const known = [...due, ...tests, ...subject];
    return { due: due[0], tests, subject, others: reads.filter((node) => !known.includes(node)) };
  }

  test('a claim reads what it takes through webhook_deliveries_due, with statistics or without, custom or generic', async (t) => {
    const { client, analyze } = await backlog(t);
    for (const analyzed of [false, true]) {
      if (analyzed) await client.query('ANALYZE');
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const plan = await analyze(POSTGRES_QUERIES.claim, claimValues({}));
        const { due, tests, subject, others } = byIndex(readsOfDeliveries(plan));
        assert.equal(due?.['Actual Rows'], 16, `${mode}, analyzed ${analyzed}: ${describeNode(due as PlanNode)}`);
        assert.deepEqual(
          subject.map((node) => [node['Actual Loops'], node['Actual Rows']]),
          [[16, 0]],
          `one probe of the subject index per delivery taken: ${subject.map(describeNode).join('\n')}`,
        );
        assert.ok(
          tests.every((node) => node['Actual Loops'] === 0),
          'no endpoint is paused: no test sends are looked for',
        );
        for (const node of others) assert.equal(node['Index Name'], 'webhook_deliveries_pkey', describeNode(node));
      }
    }
  });

  test('of an endpoint paused by a Retry-After a claim reads only its untried test sends, not the backlog', async (t) => {
    const { client, endpoint, analyze } = await backlog(t);
    await client.query(`INSERT INTO events (type, at, data) VALUES ('webhook.test', now(), '{}');
      INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at, triggered_by)
        SELECT max(seq), ${endpoint}, 'pending', now(), 'test' FROM events;
      UPDATE webhook_endpoints SET paused_until = now() + interval '1 day' WHERE id = ${endpoint}`);
    await client.query('ANALYZE');
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const { due, tests } = byIndex(readsOfDeliveries(await analyze(POSTGRES_QUERIES.claim, claimValues({}))));
      assert.equal(due?.['Actual Loops'], 0, `${mode}: ${describeNode(due as PlanNode)}`);
      assert.deepEqual(
        tests.map((node) => node['Actual Rows']),
        [1],
        tests.map(describeNode).join('\n'),
      );
    }
  });

  test('an endpoint at its bound is not read at all; claims in flight elsewhere are all a claim skips', async (t) => {
    const { store, client, endpoint, analyze } = await backlog(t);
    await client.query('ANALYZE');
    const full = readsOfDeliveries(await analyze(POSTGRES_QUERIES.claim, claimValues({ [endpoint]: 0 })));
    assert.ok(
      full.every((node) => (node['Actual Loops'] ?? 0) === 0),
      full.map(describeNode).join('\n'),
    );
    const now = new Date(Date.now() + 60_000);
    const query = { now, leaseMs: 60_000, limit: 64, free: new Map(), freeOtherwise: 16, fullOwners: [] };
    assert.equal((await store.deliveries.claim(query)).length, 16, 'another instance has 16 in flight');
    const { due } = byIndex(readsOfDeliveries(await analyze(POSTGRES_QUERIES.claim, claimValues({}))));
    assert.equal(due?.['Actual Rows'], 16);
    assert.equal(due?.['Rows Removed by Filter'], 16, 'only the 16 claimed ones were read and skipped');
  });

  test('stats find the oldest pending event through webhook_deliveries_endpoint, not a scan of events', async (t) => {
    const { store, client, analyze } = await backlog(t);
    await client.query('ANALYZE');
    const plan = await analyze(POSTGRES_QUERIES.stats, []);
    const oldest = plan.find(
      (node) => node['Index Name'] === 'webhook_deliveries_endpoint' && node['Actual Rows'] === 1,
    );
    assert.ok(oldest, plan.map(describeNode).join('\n'));
    assert.ok(!plan.some((node) => node['Relation Name'] === 'events' && node['Node Type'] === 'Seq Scan'));
    const stats = await store.deliveries.stats(new Date());
    assert.equal(stats.pending, BACKLOG);
  });

  test("fan-out reads each endpoint's span of events through events_position, in (tx, seq) order", async (t) => {
    // 32 deliveries, for a claim that may take one of any endpoint.
    const STEP = [32, '{}', 1, []];
    const { client, analyze } = await backlog(t);
    await client.query('ANALYZE');
    // The disabled endpoint, enabled at position (0, 0): a step of 32 deliveries between the two endpoints
    // queues the 16 events after it and moves it on; the other endpoint is at the newest event already.
    await client.query('UPDATE webhook_endpoints SET enabled = true WHERE id = 2');
    // Prepared, as the store runs it: after five runs PostgreSQL may keep a generic plan.
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const plan = await analyze(POSTGRES_FAN_OUT.step, STEP);
      const events = plan.filter((node) => node['Relation Name'] === 'events');
      assert.ok(events.length > 0, plan.map(describeNode).join('\n'));
      for (const node of events) {
        assert.equal(node['Index Name'], 'events_position', `${mode}: ${describeNode(node)}`);
        const reach = 16 * READ_PER_QUEUED;
        assert.ok((node['Actual Rows'] ?? 0) <= reach, `${mode}, reads its reach, not more: ${describeNode(node)}`);
      }
    }
    const step = () => client.query(POSTGRES_FAN_OUT.step, STEP);
    const queued = async () =>
      (
        await client.query(`SELECT count(*)::int AS n, min(event_seq)::int AS first, max(event_seq)::int AS last
          FROM webhook_deliveries WHERE endpoint_id = 2`)
      ).rows[0];
    const positions = async () =>
      (await client.query('SELECT fanned_seq::int AS seq FROM webhook_endpoints ORDER BY id')).rows.map(
        (row) => row.seq,
      );
    await step();
    assert.deepEqual(await queued(), { n: 16, first: 1, last: 16 });
    assert.deepEqual(await positions(), [2 * BACKLOG, 16]);
    // Retention removed the events after it but the newest 20: a step goes to the next 16 there are.
    await client.query('DELETE FROM events WHERE seq > 16 AND seq <= $1', [2 * BACKLOG - 20]);
    await step();
    assert.deepEqual(await queued(), { n: 32, first: 1, last: 2 * BACKLOG - 4 });
    // Settling one endpoint takes it to the newest event, however many there are after it.
    await client.query(POSTGRES_FAN_OUT.settle, [2]);
    assert.deepEqual(await queued(), { n: 36, first: 1, last: 2 * BACKLOG });
    assert.deepEqual(await positions(), [2 * BACKLOG, 2 * BACKLOG]);
    // A disabled endpoint's settle reads none of the events after it: one probe finds the newest.
    await client.query(`UPDATE webhook_endpoints SET enabled = false, fanned_tx = '0', fanned_seq = 0 WHERE id = 2`);
    const settle = await analyze(POSTGRES_FAN_OUT.settle, [2]);
    for (const node of settle.filter((node) => node['Relation Name'] === 'events'))
      assert.ok((node['Actual Rows'] ?? 0) <= 1, describeNode(node));
    await client.query(POSTGRES_FAN_OUT.settle, [2]);
    assert.deepEqual(await queued(), { n: 36, first: 1, last: 2 * BACKLOG });
    assert.deepEqual(await positions(), [2 * BACKLOG, 2 * BACKLOG]);
  });
});
