import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { request } from '../helpers/calls.js';
import { createPgCluster, pgClusterUnavailable } from '../helpers/pg-cluster.js';
import { postgresConfig } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Events nobody listens to cost nothing: with no webhook endpoint enabled, a create on PostgreSQL sends no
 * fan-out step and no claim (counted in the server's own statement log), and an endpoint enabled or made
 * afterwards, here or on another instance, still gets every event of its types from then on.
 */

/** The dispatcher polls every 500 ms: past this, a poll has looked since the last change. */
const PAST_A_POLL_MS = 700;

/** An app on `store`, listening; with the webhook dispatcher unless `dispatch` is false. */
async function serve(t: TestContext, store: PostgresStore, dispatch = true): Promise<string> {
  const app = await buildApp({
    store,
    webhooks: { allowPrivateUrls: true },
    ...(dispatch ? { webhookDelivery: { timeoutMs: 1000, retrySchedule: [100] } } : {}),
  });
  t.after(() => app.close());
  return app.listen({ host: '127.0.0.1', port: 0 });
}

test('PostgreSQL: with no endpoint enabled a create sends no fan-out or claim; later endpoints get what follows', {
  skip: pgClusterUnavailable(),
}, async (t) => {
  const cluster = await createPgCluster();
  t.after(() => cluster.destroy());
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query("ALTER SYSTEM SET log_statement = 'all'");
  await admin.query('SELECT pg_reload_conf()');
  await admin.end();
  /** The named statements the server ran (logged as `execute <name>:`) since `from` (a length of the log). */
  const executed = (from: number) => {
    const names = new Map<string, number>();
    for (const [, name] of readFileSync(cluster.logFile, 'utf8')
      .slice(from)
      .matchAll(/execute ([\w-]+):/g)) {
      names.set(name as string, (names.get(name as string) ?? 0) + 1);
    }
    return names;
  };
  const logLength = () => readFileSync(cluster.logFile, 'utf8').length;

  const store = await PostgresStore.open(postgresConfig(cluster.url));
  t.after(() => store.close());
  const other = await PostgresStore.open(postgresConfig(cluster.url));
  t.after(() => other.close());
  const url = await serve(t, store);
  const otherUrl = await serve(t, other, false);
  const { key } = await issueApiKey(store, () => new Date(), { name: 'idle' });
  const call = (base: string, method: string, path: string, body?: unknown) =>
    request(base, method, path, body === undefined ? { key } : { key, body });
  const createPets = async (count: number) => {
    for (let i = 0; i < count; i++)
      assert.equal((await call(url, 'POST', '/v1/pets', { name: `p${i}`, categoryId: 1 })).status, 201);
  };

  // An endpoint, disabled: none is enabled.
  const receiver = await startReceiver(t);
  const endpoint = await call(url, 'POST', '/v1/webhooks', { url: receiver.url, events: ['pet.created'] });
  assert.equal(endpoint.status, 201, endpoint.text);
  assert.equal((await call(url, 'PATCH', `/v1/webhooks/${endpoint.json.id}`, { enabled: false })).status, 200);
  await sleep(PAST_A_POLL_MS);
  const from = logLength();
  const started = performance.now();
  await createPets(20);
  const took = performance.now() - started;
  const sent = executed(from);
  t.diagnostic(`20 creates in ${took.toFixed(0)} ms sent ${JSON.stringify(Object.fromEntries(sent))}`);
  assert.equal(sent.get('pets-insert'), 20, 'the log holds what the creates sent');
  assert.equal(sent.get('deliveries-claim') ?? 0, 0, 'no claim');
  // The dispatcher's poll still looks, every 500 ms, whatever the creates: one step each, no more.
  const polls = Math.ceil(took / 500) + 1;
  assert.ok((sent.get('fan-out-step') ?? 0) <= polls, `${sent.get('fan-out-step')} fan-out steps in ${took} ms`);

  // Enabled here: what follows is sent at once, and nothing recorded while it was disabled.
  assert.equal((await call(url, 'PATCH', `/v1/webhooks/${endpoint.json.id}`, { enabled: true })).status, 200);
  await createPets(3);
  await receiver.until((got) => got.length === 3, 3000);
  // Another instance makes an endpoint while this one knows of none enabled (the first is disabled again):
  // its poll finds it, and it gets the events recorded here from its creation on.
  assert.equal((await call(url, 'PATCH', `/v1/webhooks/${endpoint.json.id}`, { enabled: false })).status, 200);
  await sleep(PAST_A_POLL_MS);
  const late = await startReceiver(t);
  assert.equal((await call(otherUrl, 'POST', '/v1/webhooks', { url: late.url, events: ['pet.created'] })).status, 201);
  await createPets(3);
  await late.until((got) => got.length === 3, 3000);
  await sleep(300);
  assert.equal(late.received.length, 3, 'each once');
  assert.equal(receiver.received.length, 3, 'none to the disabled one');
});
