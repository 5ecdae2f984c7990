import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { eventually, waitUntil } from '../../dev/eventually.js';
import { createKey } from '../../dev/petstore-cli.js';
import type { Answer, Received, Receiver } from '../../dev/webhook-receiver.js';
import { buildApp } from '../../src/app.js';
import { STOPPED_ATTEMPT_ERROR } from '../../src/domain/delivery-status.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { PER_ENDPOINT } from '../../src/webhooks/dispatcher.js';
import type { Lookup } from '../../src/webhooks/target-policy.js';
import { request } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { createPgCluster, pgClusterUnavailable, sparePort } from '../helpers/pg-cluster.js';
import { cliEnv, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { eachBackend, postgresConfig, type StoreBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * The sending half of webhooks, black-box: endpoints registered over HTTP, changes made over HTTP, and what
 * a local receiver gets, checked against the feed and the deliveries log.
 */

/** Retries after 100 ms then 200 ms: three attempts at most. */
const FAST: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [100, 200] },
};

async function register(h: Harness, url: string, body: Record<string, unknown> = {}) {
  const result = await h.call('POST', '/v1/webhooks', { body: { url, ...body } });
  assert.equal(result.status, 201, result.text);
  return result.json as { id: number; secret: string };
}

/** The deliveries log, newest first (one page is enough here). */
async function attempts(h: Harness, endpoint: number): Promise<any[]> {
  const result = await h.call('GET', `/v1/webhooks/${endpoint}/deliveries?limit=100`);
  assert.equal(result.status, 200, result.text);
  return result.json;
}

/**
 * The log once it holds `count` attempts whose newest is final (succeeded or failed). Entries of deliveries
 * that waited for an earlier event of their subject (`waitingFor`) are no attempts: left out.
 */
const settledLog = (h: Harness, endpoint: number, count: number) =>
  eventually(`endpoint ${endpoint}'s ${count} attempts`, async () => {
    const log = (await attempts(h, endpoint)).filter(
      (entry: { waitingFor?: string }) => entry.waitingFor === undefined,
    );
    return log.length >= count && log[0].status !== 'pending' ? log : undefined;
  });

function verify(secret: string, request: { headers: Record<string, string>; body: string }): unknown {
  return new Webhook(secret).verify(request.body, request.headers);
}

const failing =
  (times: number): Answer =>
  (n) => ({ status: n < times ? 500 : 200 });

function suite(backend: StoreBackend) {
  test('a change arrives within 1 s, signed, as the feed shows its event', async (t) => {
    const h = await startHarness(t, backend, FAST);
    const receiver = await startReceiver(t);
    const { secret } = await register(h, `${receiver.url}/hooks?x=1`);
    const arrival = (n: number) => (receiver.received[n] as Received).at;
    const [pet] = await h.createPets(1);
    const created = Date.now();
    await receiver.until((got) => got.length === 1, 1000);
    const placed = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } });
    assert.equal(placed.status, 201, placed.text);
    const ordered = Date.now();
    await receiver.until((got) => got.length === 3, 1000);
    // Committed past this app's HTTP, as another process would: found by the poll alone.
    const elsewhere = await h.store.pets.create({ name: 'elsewhere', categoryId: 1, status: 'available' });
    const committed = Date.now();
    await receiver.until((got) => got.length === 4, 1000);
    t.diagnostic(
      `delivered ${arrival(0) - created} ms after the create's answer, the order's two ${arrival(2) - ordered} ms ` +
        `after its answer, a change committed elsewhere ${arrival(3) - committed} ms after its commit`,
    );

    // The feed (PostgreSQL) shows an event once every transaction that began before it ended: poll.
    const feed = await eventually('the four events in the feed', async () => {
      const page = await h.call('GET', '/v1/events');
      assert.equal(page.status, 200, page.text);
      return page.json.length === 4 ? page : undefined;
    });
    const byId = new Map(receiver.received.map((request) => [request.headers['webhook-id'], request]));
    for (const event of feed.json) {
      const request = byId.get(event.id);
      assert.ok(request, `event ${event.id} was delivered`);
      assert.equal(request.headers['content-type'], 'application/json');
      assert.deepEqual(verify(secret, request), event, 'the verified body is the feed event');
      assert.equal(request.body, JSON.stringify(event));
      assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - request.at / 1000) < 5);
      assert.equal(request.headers.traceparent, undefined, 'tracing is off: no trace context is sent');
    }
    assert.deepEqual(
      feed.json.map((event: { type: string }) => event.type),
      ['pet.created', 'order.placed', 'pet.status_changed', 'pet.created'],
    );
    assert.deepEqual(
      feed.json.map((event: { id: string }) => JSON.parse(byId.get(event.id)?.body ?? '{}').subject),
      [`pet/${pet.id}`, `order/${placed.json.id}`, `pet/${pet.id}`, `pet/${elsewhere.id}`],
      'each body says what its event is about',
    );
    assert.throws(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, receiver.received[0] as Received));
    // Attempts are recorded after their answer, in batches: the log catches up a moment after the receiver.
    const log = await settledLog(h, (await h.call('GET', '/v1/webhooks')).json[0].id, 4);
    assert.deepEqual(
      log.map((entry) => [entry.status, entry.responseStatus, entry.attempt]),
      Array(4).fill(['succeeded', 204, 1]),
    );
  });

  test('fails twice, then succeeds: three attempts with one webhook-id, the log shows each', async (t) => {
    const h = await startHarness(t, backend, FAST);
    const receiver = await startReceiver(t, failing(2));
    const { id, secret } = await register(h, receiver.url, { events: ['pet.created'] });
    await h.createPets(1);
    const log = await settledLog(h, id, 3);
    assert.equal(receiver.received.length, 3);
    assert.equal(new Set(receiver.ids()).size, 1, 'every attempt carries the same webhook-id');
    for (const request of receiver.received) verify(secret, request);
    const [first, second, third] = receiver.received.map((request) => request.at) as [number, number, number];
    assert.ok(
      second - first >= 100 && third - second >= 200,
      `retried after the schedule: ${second - first}, ${third - second} ms`,
    );
    assert.deepEqual(
      log.map(({ eventId, type, attempt, status, responseStatus }) => ({
        eventId,
        type,
        attempt,
        status,
        responseStatus,
      })),
      [3, 2, 1].map((attempt) => ({
        eventId: receiver.ids()[0],
        type: 'pet.created',
        attempt,
        status: attempt === 3 ? 'succeeded' : 'pending',
        responseStatus: attempt === 3 ? 200 : 500,
      })),
    );
    assert.equal(log[0].nextAttemptAt, undefined);
    for (const entry of log.slice(1)) {
      assert.ok(Date.parse(entry.nextAttemptAt) > Date.parse(entry.attemptedAt), JSON.stringify(entry));
      assert.match(entry.error, /^answered 500/);
    }
  });

  test('always failing, hanging, refusing, redirecting: retried on the schedule, then failed', async (t) => {
    const h = await startHarness(t, backend, {
      ...FAST,
      webhookDelivery: { timeoutMs: 300, retrySchedule: [100, 200] },
    });
    const broken = await startReceiver(t, () => ({ status: 503 }));
    const hanging = await startReceiver(t, () => 'hang');
    const target = await startReceiver(t);
    const redirecting = await startReceiver(t, () => ({ status: 307, headers: { location: `${target.url}/moved` } }));
    const closed = await startReceiver(t);
    await closed.close();
    const cases: [Receiver, RegExp, number | undefined][] = [
      [broken, /^answered 503$/, 503],
      [hanging, /^no answer within 300 ms$/, undefined],
      [closed, /^connection refused$/, undefined],
      [redirecting, new RegExp(`^redirected to ${target.url}/moved$`), 307],
    ];
    const endpoints = [];
    for (const [receiver] of cases) endpoints.push((await register(h, receiver.url, { events: ['pet.created'] })).id);
    await h.createPets(1);
    for (const [i, [receiver, error, responseStatus]] of cases.entries()) {
      const log = await settledLog(h, endpoints[i] as number, 3);
      assert.deepEqual(
        log.map((entry) => [entry.attempt, entry.status, entry.responseStatus, entry.nextAttemptAt !== undefined]),
        [
          [3, 'failed', responseStatus, false],
          [2, 'pending', responseStatus, true],
          [1, 'pending', responseStatus, true],
        ],
        receiver.url,
      );
      for (const entry of log) assert.match(entry.error, error);
      if (receiver !== closed) assert.equal(receiver.received.length, 3, receiver.url);
    }
    assert.equal(target.received.length, 0, 'a redirect is not followed');
  });

  test('a 2xx whose body never ends succeeds on its status line: recorded at once, never resent', async (t) => {
    const timeoutMs = 10_000;
    const h = await startHarness(t, backend, { ...FAST, webhookDelivery: { timeoutMs, retrySchedule: [100] } });
    const receiver = await startReceiver(t, () => ({ status: 200, endless: true }));
    const { id } = await register(h, receiver.url, { events: ['pet.created'] });
    await h.createPets(1);
    // Within the attempt's time-out: today's sender waited for the body that long, then called it no answer.
    const log = await eventually(
      'the attempt recorded',
      async () => {
        const entries = await attempts(h, id);
        return entries.length > 0 ? entries : undefined;
      },
      { timeoutMs: timeoutMs - 1000 },
    );
    t.diagnostic(`recorded ${Date.now() - (receiver.received[0]?.at ?? 0)} ms after the request arrived`);
    assert.deepEqual(
      log.map(({ attempt, status, responseStatus, error, nextAttemptAt }) => ({
        attempt,
        status,
        responseStatus,
        error,
        nextAttemptAt,
      })),
      [{ attempt: 1, status: 'succeeded', responseStatus: 200, error: undefined, nextAttemptAt: undefined }],
    );
    // Ten times the retry delay: a resend would have come by now.
    await sleep(1000);
    assert.equal(receiver.received.length, 1, 'sent once');
    assert.equal((await attempts(h, id)).length, 1, 'one attempt');
  });

  test('one hanging endpoint does not delay another', async (t) => {
    const h = await startHarness(t, backend, {
      ...FAST,
      webhookDelivery: { timeoutMs: 5000, retrySchedule: [60_000] },
    });
    const hanging = await startReceiver(t, () => 'hang');
    const fast = await startReceiver(t);
    await register(h, hanging.url);
    await register(h, fast.url);
    const started = Date.now();
    const creates = PER_ENDPOINT + 4;
    for (let i = 1; i <= creates; i++) {
      await h.createPets(1);
      const created = Date.now();
      await fast.until((got) => got.length === i, 1000);
      assert.ok((fast.received[i - 1]?.at ?? 0) - created < 1000);
    }
    t.diagnostic(
      `${creates} deliveries to the fast endpoint in ${Date.now() - started} ms; ${hanging.received.length} hanging`,
    );
    assert.equal(hanging.received.length, 1, 'an endpoint that has not answered is trusted with one attempt');
  });

  test('SSRF at attempt time: a name that now resolves to a private address is refused', async (t) => {
    let answer = '93.184.215.14';
    const lookups: string[] = [];
    const lookup: Lookup = async (hostname) => {
      lookups.push(hostname);
      return [{ address: answer }];
    };
    const h = await startHarness(t, backend, { ...FAST, webhooks: { allowPrivateUrls: false, lookup } });
    const receiver = await startReceiver(t);
    const { id } = await register(h, `https://hooks.example.com:${receiver.port}/in`);
    answer = '127.0.0.1';
    await h.createPets(1);
    const log = await settledLog(h, id, 3);
    for (const entry of log) assert.equal(entry.error, 'refused address 127.0.0.1 (loopback)');
    assert.equal(log[0].status, 'failed');
    assert.ok(lookups.length >= 4, 'resolved at registration and at each attempt');
    assert.equal(receiver.connections(), 0, 'nothing reached the local receiver');
  });

  test('a disabled endpoint keeps its pending deliveries and gets them once enabled again', async (t) => {
    // The retry waits 1.5 s, so the PATCH lands before it is due also on a slow, busy machine (with 100 ms,
    // the retry once went out before the PATCH was through: an attempt in flight is not called back).
    const h = await startHarness(t, backend, { ...FAST, webhookDelivery: { timeoutMs: 1000, retrySchedule: [1500] } });
    const receiver = await startReceiver(t, failing(1));
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    await receiver.until((got) => got.length === 1, 1000);
    const disabled = await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: false } });
    assert.equal(disabled.status, 200, disabled.text);
    await sleep(2000);
    assert.equal(receiver.received.length, 1, 'nothing is sent while it is disabled');
    assert.equal((await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: true } })).status, 200);
    await receiver.until((got) => got.length === 2, 1500);
    assert.deepEqual(
      (await settledLog(h, id, 2)).map((entry) => entry.status),
      ['succeeded', 'pending'],
    );
  });

  test('closing waits for attempts in flight, and records a hanging one as stopped, due again at once', async (t) => {
    const h = await startHarness(t, backend, { ...FAST, webhookDelivery: { timeoutMs: 5000, retrySchedule: [100] } });
    const slow = await startReceiver(t, () => ({ status: 200, delayMs: 300 }));
    const hanging = await startReceiver(t, () => 'hang');
    const answered = await register(h, slow.url);
    const cut = await register(h, hanging.url);
    await h.createPets(1);
    await slow.until((got) => got.length === 1, 1000);
    await hanging.until((got) => got.length === 1, 1000);
    const closing = Date.now();
    await h.app.close();
    const took = Date.now() - closing;
    t.diagnostic(`closed in ${took} ms`);
    assert.ok(took < 5000, `closed in ${took} ms, before the attempt's time-out`);
    const log = (id: number) => h.store.webhooks.attempts(id, { limit: 10 });
    assert.deepEqual(
      (await log(answered.id)).map((entry) => entry.status),
      ['succeeded'],
    );
    const [stopped, ...more] = await log(cut.id);
    assert.deepEqual(more, [], 'one attempt');
    assert.deepEqual([stopped?.attempt, stopped?.status, stopped?.error], [1, 'pending', STOPPED_ATTEMPT_ERROR]);
    const next = stopped?.nextAttemptAt?.getTime() ?? 0;
    assert.ok(next >= closing && next <= Date.now(), 'due again from the stop on');
    // Its lease (5 s + 30 s) was let go as it was recorded: another instance takes it now.
    const [again, ...others] = await h.store.deliveries.claim({
      now: new Date(),
      leaseMs: 1000,
      limit: 10,
      free: new Map(),
      freeOtherwise: 10,
      fullOwners: [],
    });
    assert.deepEqual(others, []);
    assert.equal(again?.endpoint.id, cut.id, 'claimable at once');
    assert.equal(again?.attempt, 1, 'the same attempt, to be sent again');
  });

  test('closing gives back the deliveries claimed ahead: another instance takes them at once, untried', async (t) => {
    const h = await startHarness(t, backend, { ...FAST, webhookDelivery: { timeoutMs: 5000, retrySchedule: [100] } });
    const slow = await startReceiver(t, () => ({ status: 204, delayMs: 1000 }));
    const { id } = await register(h, slow.url);
    const pets = 200;
    await h.createPets(pets);
    // Four answers prove the endpoint (1, 2, 4, 8 in flight); then its next ones are claimed ahead.
    await slow.until((got) => got.length >= 40, 20_000);
    await h.app.close();
    const sent = slow.received.length;
    const claim = () =>
      h.store.deliveries.claim({
        now: new Date(),
        leaseMs: 1000,
        limit: pets,
        free: new Map(),
        freeOtherwise: pets,
        fullOwners: [],
      });
    const left = await claim();
    t.diagnostic(`${sent} sent before the stop, ${left.length} claimable after it`);
    assert.ok(sent < pets, 'some were left when it closed');
    // All but what a claim under way when the stop came took (left to its lease, as a dead process's): at
    // most an endpoint's 16. Without giving back, the 64 claimed ahead would wait for their lease.
    assert.ok(left.length >= pets - sent - 16, 'what was not sent is claimable at once, not held by a lease');
    assert.ok(
      left.every((delivery) => delivery.attempt === 1 && delivery.endpoint.id === id),
      'untried',
    );
  });

  test('metrics: deliveries by outcome, and the age of the oldest pending one', async (t) => {
    const h = await startHarness(t, backend, {
      ...FAST,
      webhookDelivery: { timeoutMs: 1000, retrySchedule: [100, 60_000] },
    });
    const ok = await startReceiver(t);
    const down = await startReceiver(t, () => ({ status: 500 }));
    await register(h, ok.url);
    const { id } = await register(h, down.url);
    await h.createPets(1);
    await waitUntil('two attempts', async () => (await attempts(h, id)).length === 2, { timeoutMs: 3000 });
    await sleep(1000);
    const text = (await h.call('GET', '/metrics')).text;
    assert.match(text, /^petstore_webhook_deliveries_total\{outcome="succeeded"\} 1$/m);
    assert.match(text, /^petstore_webhook_deliveries_total\{outcome="retried"\} 2$/m);
    assert.match(text, /^petstore_webhook_pending_deliveries 1$/m);
    const age = Number(/^petstore_webhook_oldest_pending_seconds (\S+)$/m.exec(text)?.[1]);
    assert.ok(age >= 1 && age < 10, `oldest pending age ${age} s`);
  });
}

/** Instances (PostgreSQL), or processes on one file (SQLite), claim deliveries: none is sent twice. */
function sharedWork(backend: StoreBackend) {
  test('two instances deliver 200 events exactly once each', async (t) => {
    // The default 10 s time-out: with FAST's 1 s, an answer a busy machine was slow to read was retried,
    // rightly (at least once), and counted twice here; this test is of claims, not time-outs.
    const h = await startHarness(t, backend, { ...FAST, webhookDelivery: { timeoutMs: 10_000, retrySchedule: [100] } });
    const other = await h.startInstance();
    const receiver = await startReceiver(t);
    await register(h, receiver.url, { events: ['pet.created'] });
    const started = Date.now();
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? h : other).createPets(1, () => ({ name: `p${batch}-${i}`, categoryId: 1 })),
        ),
      );
    }
    await receiver.until((got) => new Set(got.map((request) => request.headers['webhook-id'])).size === 200, 5000);
    const took = Date.now() - started;
    // Anything sent twice would arrive within this.
    await sleep(1000);
    t.diagnostic(`200 creates over two instances, all delivered ${took} ms after the first create`);
    assert.equal(new Set(receiver.ids()).size, 200);
    assert.equal(receiver.received.length, 200, 'each event was sent once');
  });
}

/** The real CLI stopped (SIGTERM) while an attempt waits for an answer that never comes, then restarted. */
function stopMidAttempt(backend: StoreBackend) {
  test('SIGTERM mid-attempt: the log shows the attempt as stopped, sent again after the restart', async (t) => {
    const receiver = await startReceiver(t, (n) => (n === 0 ? 'hang' : { status: 204 }));
    const env = cliEnv(await freshDatabaseUrl(t, backend), { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    const first = await startServe(t, env);
    const key = await createKey(env, 'hooks');
    const endpoint = await request(first.url, 'POST', '/v1/webhooks', { key, body: { url: receiver.url } });
    assert.equal(endpoint.status, 201, endpoint.text);
    const created = await request(first.url, 'POST', '/v1/pets', { key, body: { name: 'Rex', categoryId: 1 } });
    assert.equal(created.status, 201, created.text);
    await receiver.until((got) => got.length === 1, 5000);
    const stopping = Date.now();
    assert.deepEqual(await first.stop(), { code: 0, signal: null }, first.stdout() + first.stderr());
    const stopped = Date.now();

    const second = await startServe(t, env);
    await receiver.until((got) => got.length === 2, 10_000);
    const [sent, again] = receiver.ids();
    assert.equal(again, sent, 'sent again with the same webhook-id');
    const log = await eventually('the attempt after the restart in the log', async () => {
      const page = await request(second.url, 'GET', `/v1/webhooks/${endpoint.json.id}/deliveries`, { key });
      return page.json.length === 2 ? page.json : undefined;
    });
    assert.deepEqual(
      log.map((entry: any) => [entry.eventId, entry.attempt, entry.status, entry.error]),
      [
        [sent, 1, 'succeeded', undefined],
        [sent, 1, 'pending', STOPPED_ATTEMPT_ERROR],
      ],
    );
    const next = Date.parse(log[1].nextAttemptAt);
    assert.ok(next >= stopping && next <= stopped, `due again from the stop on: ${log[1].nextAttemptAt}`);
    assert.deepEqual(await second.stop(), { code: 0, signal: null });
  });
}

/** The real CLI on a SQLite file, killed with deliveries pending, then restarted. */
test('kill -9 with deliveries pending: the restarted service delivers every one of them', async (t) => {
  const port = await sparePort();
  const env = cliEnv(join(tempDir(t), 'petstore.db'), {
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_SCHEDULE: Array(20).fill('500ms').join(','),
  });
  const first = await startServe(t, env);
  const key = await createKey(env, 'hooks');
  const endpoint = await request(first.url, 'POST', '/v1/webhooks', {
    key,
    body: { url: `http://127.0.0.1:${port}/` },
  });
  assert.equal(endpoint.status, 201, endpoint.text);
  for (let i = 0; i < 20; i++) {
    const created = await request(first.url, 'POST', '/v1/pets', { key, body: { name: `crash-${i}`, categoryId: 1 } });
    assert.equal(created.status, 201, created.text);
  }
  await sleep(300);
  first.child.kill('SIGKILL');
  assert.deepEqual(await first.exit, { code: null, signal: 'SIGKILL' });

  const receiver = await startReceiver(t, undefined, port);
  const started = Date.now();
  const second = await startServe(t, env);
  const feed = await request(second.url, 'GET', '/v1/events?limit=100', { key });
  const events = new Set(feed.json.map((event: { id: string }) => event.id));
  assert.equal(events.size, 20);
  await receiver.until((got) => new Set(got.map((r) => r.headers['webhook-id'])).size === events.size, 45_000);
  t.diagnostic(
    `all 20 delivered ${Date.now() - started} ms after the restart began; ${receiver.received.length} requests`,
  );
  assert.ok(receiver.ids().every((id) => events.has(id)));
  assert.deepEqual(await second.stop(), { code: 0, signal: null });
  // One log line per attempt, at info.
  const attempts = second
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"webhook attempt"'))
    .map((line) => JSON.parse(line));
  const succeeded = attempts.filter((line) => line.status === 'succeeded');
  assert.equal(new Set(succeeded.map((line) => line.eventId)).size, 20);
  for (const line of attempts) {
    assert.equal(line.level, 30);
    assert.equal(line.endpointId, endpoint.json.id);
    assert.ok(events.has(line.eventId) && line.attempt >= 1 && typeof line.durationMs === 'number');
  }
});

const clusterSkip = pgClusterUnavailable();

test('PostgreSQL away while delivering: deliveries wait and resume, none lost or sent twice', {
  skip: clusterSkip,
}, async (t) => {
  const cluster = await createPgCluster();
  const store = await PostgresStore.open({
    ...postgresConfig(cluster.url),
    connectTimeoutMs: 1000,
    queryTimeoutMs: 2000,
  });
  const app = await buildApp({
    store,
    webhooks: { allowPrivateUrls: true },
    webhookDelivery: { timeoutMs: 5000, retrySchedule: [200, 200, 200] },
  });
  t.after(async () => {
    await app.close();
    await store.close();
    cluster.destroy();
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const { key } = await issueApiKey(store, () => new Date(), { name: 'outage' });
  // Answers each request 1.5 s after it arrived: the database goes away while attempts are in flight.
  const receiver = await startReceiver(t, () => ({ status: 200, delayMs: 1500 }));
  const endpoint = await request(url, 'POST', '/v1/webhooks', { key, body: { url: receiver.url } });
  assert.equal(endpoint.status, 201, endpoint.text);
  const creates = PER_ENDPOINT + 4;
  for (let i = 0; i < creates; i++) {
    assert.equal((await request(url, 'POST', '/v1/pets', { key, body: { name: `o${i}`, categoryId: 1 } })).status, 201);
  }
  // A new endpoint is sent one attempt at a time until it answers (1.5 s): one is in flight.
  await receiver.until((got) => got.length === 1, 1000);
  cluster.crash();
  await sleep(3000);
  assert.equal(receiver.received.length, 1, 'nothing new is sent while the database is away');
  cluster.start();
  await receiver.until((got) => got.length >= creates, 20_000);
  await sleep(2500);
  assert.equal(new Set(receiver.ids()).size, creates, 'every event arrived');
  assert.equal(receiver.received.length, creates, 'none twice: the attempts in flight were recorded once it was back');
  const log = await request(url, 'GET', `/v1/webhooks/${endpoint.json.id}/deliveries?limit=100`, { key });
  assert.deepEqual(
    log.json.map((entry: { status: string; attempt: number }) => `${entry.status}/${entry.attempt}`),
    Array(creates).fill('succeeded/1'),
  );
});

eachBackend((backend) => {
  describe(`webhook delivery [${backend.name}]`, () => {
    suite(backend);
    sharedWork(backend);
    stopMidAttempt(backend);
  });
});
