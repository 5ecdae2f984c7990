import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { createKey } from '../../dev/petstore-cli.js';
import { type CallResult, request } from '../helpers/calls.js';
import { cliEnv, type ServeProcess, startServe } from '../helpers/process.js';
import { BACKENDS, createPostgresSchema } from '../helpers/stores.js';

const postgresSkip = BACKENDS.find((backend) => backend.name === 'postgres')?.skip;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sessions idle in a transaction while holding this schema's pet-ids or order-ids lock (advisory, one bigint key). */
const HELD_ID_ORDER_LOCKS = `SELECT count(*)::int AS held
  FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND s.state LIKE 'idle in transaction%'
    AND ((l.classid::bigint << 32) | l.objid::bigint) IN (
      hashtext(coalesce(current_schema(), '') || '.petstore.pet-ids'),
      hashtext(coalesce(current_schema(), '') || '.petstore.order-ids'))`;

interface Sent {
  readonly path: string;
  readonly body: object;
  readonly idempotencyKey?: string;
  readonly result: CallResult;
}

/** Creates and orders, plain and with Idempotency-Key, on `server` until `running()` says stop. */
async function load(server: ServeProcess, key: string, running: () => boolean, sent: Sent[]): Promise<void> {
  const available: number[] = [];
  let n = 0;
  const one = async () => {
    const i = n++;
    const idempotencyKey = i % 2 === 0 ? `k${i}` : undefined;
    const petId = i % 4 >= 2 ? available.shift() : undefined;
    const [path, body] =
      petId === undefined ? ['/v1/pets', { name: `a${i}`, categoryId: 1 }] : ['/v1/store/orders', { petId }];
    const headers: Record<string, string> = idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey };
    const result = await request(server.url, 'POST', path, { key, body, headers });
    sent.push({ path, body, ...(idempotencyKey === undefined ? {} : { idempotencyKey }), result });
    if (path === '/v1/pets' && result.status === 201) available.push(result.json.id);
  };
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (running()) await one();
    }),
  );
}

test('a stopped instance holding the id-order locks: the others write again within 2 s, nothing is lost', {
  skip: postgresSkip,
}, async (t) => {
  const schema = await createPostgresSchema();
  t.after(() => schema.drop());
  const env = cliEnv(schema.url);
  const key = await createKey(env, 'fleet');
  const [a, b] = (await Promise.all([startServe(t, env), startServe(t, env)])) as [ServeProcess, ServeProcess];
  const pid = a.child.pid as number;
  const db = new pg.Client({ connectionString: schema.url });
  await db.connect();
  t.after(() => db.end());
  const spare: number[] = [];
  for (let i = 0; i < 40; i++) {
    spare.push((await request(b.url, 'POST', '/v1/pets', { key, body: { name: `spare${i}`, categoryId: 2 } })).json.id);
  }

  const sent: Sent[] = [];
  let loading = true;
  const loaded = load(a, key, () => loading, sent);
  const probes: Array<{ path: string; status: number; sentAt: number; took: number }> = [];
  let stoppedAt = 0;
  try {
    // Stop A until it is caught holding an id-order lock idle in a transaction (it usually is, under load).
    for (let attempt = 0; attempt < 40 && stoppedAt === 0; attempt++) {
      await sleep(attempt === 0 ? 1000 : 200);
      process.kill(pid, 'SIGSTOP');
      const at = Date.now();
      await sleep(100);
      if ((await db.query(HELD_ID_ORDER_LOCKS)).rows[0].held > 0) stoppedAt = at;
      else process.kill(pid, 'SIGCONT');
    }
    assert.ok(stoppedAt > 0, 'A was caught holding an id-order lock');

    // B creates pets and places orders until both succeed, for at most 4 s after A stopped.
    const firstSuccess = new Map<string, number>();
    const probe = async (path: string, body: () => object) => {
      if (firstSuccess.has(path)) return;
      const sentAt = Date.now();
      const result = await request(b.url, 'POST', path, { key, body: body() });
      probes.push({ path, status: result.status, sentAt: sentAt - stoppedAt, took: Date.now() - sentAt });
      assert.ok([201, 503].includes(result.status), `${path} on B: ${result.status} ${result.text}`);
      if (result.status === 201) firstSuccess.set(path, Date.now() - stoppedAt);
    };
    while (Date.now() - stoppedAt < 4000 && firstSuccess.size < 2) {
      await Promise.all([
        probe('/v1/pets', () => ({ name: `b${probes.length}`, categoryId: 1 })),
        probe('/v1/store/orders', () => ({ petId: spare.pop() })),
      ]);
    }
    t.diagnostic(`B after A stopped (ms since the stop): ${JSON.stringify(probes)}`);
    for (const path of ['/v1/pets', '/v1/store/orders']) {
      const at = firstSuccess.get(path);
      assert.ok(at !== undefined && at <= 2000, `${path} on B succeeded ${at ?? 'never'} ms after A stopped`);
    }
    assert.equal((await db.query(HELD_ID_ORDER_LOCKS)).rows[0].held, 0, "A's stuck transactions were ended");
  } finally {
    loading = false;
    process.kill(pid, 'SIGCONT');
    await loaded;
  }

  const answers = new Map<string, number>();
  for (const { path, idempotencyKey, result } of sent) {
    const kind = `${path}${idempotencyKey === undefined ? '' : ' keyed'} ${result.status}`;
    answers.set(kind, (answers.get(kind) ?? 0) + 1);
  }
  t.diagnostic(`A's answers: ${JSON.stringify(Object.fromEntries(answers))}`);
  // Every answer A gave is 201 or 503; every 201 is stored; a 503 with a key is safe to retry.
  for (const { path, body, idempotencyKey, result } of sent) {
    assert.ok([201, 503].includes(result.status), `${path} on A: ${result.status} ${result.text}`);
    if (result.status === 201) {
      const stored = await request(b.url, 'GET', `${path}/${result.json.id}`, { key });
      // A pet created here may have been ordered since: its status moved on.
      assert.deepEqual({ ...stored.json, status: 0 }, { ...result.json, status: 0 }, 'an acknowledged write is stored');
    } else if (idempotencyKey !== undefined) {
      const retried = await request(b.url, 'POST', path, { key, body, headers: { 'idempotency-key': idempotencyKey } });
      assert.equal(retried.status, 201, retried.text);
    }
  }
  const { rows } = await db.query(`SELECT
    (SELECT count(*)::int FROM orders) AS orders,
    (SELECT count(*)::int FROM pets WHERE status = 'pending') AS pending,
    (SELECT count(*)::int FROM (SELECT name FROM pets GROUP BY name HAVING count(*) > 1) twice) AS duplicated,
    (SELECT count(*)::int FROM idempotency_keys WHERE status = 0) AS placeholders`);
  assert.equal(rows[0].pending, rows[0].orders, 'every order took its pet, and only orders did');
  assert.equal(rows[0].duplicated, 0, 'no create happened twice');
  assert.equal(rows[0].placeholders, 0, 'no idempotency claim was left behind');
  await Promise.all([a.stop(), b.stop()]);
});
