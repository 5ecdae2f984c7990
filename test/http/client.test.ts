import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import {
  type Pet,
  PetstoreClient,
  type PetstoreClientOptions,
  PetstoreError,
  type WebhookEndpoint,
} from '../../src/client/index.js';
import { nextCursor } from '../../src/client/page.js';
import {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  isRetryable,
  MAX_RETRY_AFTER_SECONDS,
  parseRetryAfter,
  retryDelayMs,
} from '../../src/client/retry.js';
import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { eachBackend } from '../helpers/stores.js';
import { createEndpoint, startWebhookHarness } from '../helpers/webhooks.js';

function clientFor(h: Harness, options: Partial<PetstoreClientOptions> = {}): PetstoreClient {
  return new PetstoreClient({ baseUrl: h.url, apiKey: h.keys.all, ...options });
}

/** The PetstoreError a call rejects with. */
async function failure(call: Promise<unknown>): Promise<PetstoreError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof PetstoreError, `expected a PetstoreError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** A fetch that records the status of every response (every attempt) it sees. */
function recordingFetch(): { fetch: typeof fetch; responses: Response[] } {
  const responses: Response[] = [];
  return {
    responses,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      responses.push(response);
      return response;
    },
  };
}

eachBackend((backend) => {
  describe(`client against the service [${backend.name}]`, () => {
    test('createPet, getPet and listPets; the base URL may end in /v1', async (t) => {
      const h = await startHarness(t, backend);
      const client = clientFor(h);
      const rex = await client.createPet({ name: 'Rex', categoryId: 7 });
      assert.deepEqual(rex, { id: rex.id, name: 'Rex', categoryId: 7, status: 'available' });
      assert.equal(typeof rex.id, 'number');
      const sold = await client.createPet({ name: 'Tom', categoryId: 1, status: 'sold' });
      assert.deepEqual(await client.getPet(rex.id), rex);
      assert.deepEqual(await client.listPets(), { items: [rex, sold], nextCursor: undefined });
      assert.deepEqual((await client.listPets({ status: 'sold' })).items, [sold]);
      const v1 = new PetstoreClient({ baseUrl: `${h.url}/v1/`, apiKey: h.keys.read });
      assert.deepEqual((await v1.listPets({ limit: 1 })).items, [rex]);
    });

    test('pets() walks every page: 45 pets in pages of 20, none skipped or repeated; with a status filter', async (t) => {
      const h = await startHarness(t, backend);
      const created: Pet[] = await h.createPets(45, (i) => ({
        name: `pet-${i}`,
        categoryId: 1,
        status: i % 3 === 0 ? 'sold' : 'available',
      }));
      const recording = recordingFetch();
      const client = clientFor(h, { fetch: recording.fetch });
      assert.deepEqual(await collect(client.pets({ limit: 20 })), created);
      assert.equal(recording.responses.length, 3, 'three pages of 20, 20 and 5');
      const sold = created.filter((pet) => pet.status === 'sold');
      assert.equal(sold.length, 15);
      assert.deepEqual(await collect(client.pets({ status: 'sold', limit: 4 })), sold);

      const first = await client.listPets({ status: 'available', limit: 20 });
      assert.equal(first.items.length, 20);
      assert.ok(first.nextCursor !== undefined);
      const second = await client.listPets({ status: 'available', limit: 20, cursor: first.nextCursor });
      assert.deepEqual(
        [...first.items, ...second.items],
        created.filter((pet) => pet.status === 'available'),
      );
      assert.equal(second.nextCursor, undefined);
    });

    test('events(): the whole feed in order, a type filter, following new events until aborted', async (t) => {
      const h = await startHarness(t, backend);
      const client = clientFor(h);
      const created = await h.createPets(130);
      await settledFeed((path) => h.call('GET', path), 130);
      const all = await collect(client.events());
      assert.deepEqual(
        all.map((event) => (event.type === 'pet.created' ? event.data.id : 0)),
        created.map((pet) => pet.id),
      );
      const first = await client.listEvents({ limit: 5 });
      assert.equal(first.items.length, 5);
      assert.ok(first.nextCursor, 'the feed always gives a cursor');
      const rest = await collect(client.events({ cursor: first.nextCursor }));
      assert.deepEqual(rest, all.slice(5));
      await client.placeOrder({ petId: (created[0] as Pet).id });
      await settledFeed((path) => h.call('GET', path), 132);
      assert.deepEqual(
        (await collect(client.events({ type: 'order.placed' }))).map((event) => event.type),
        ['order.placed'],
      );

      // Walk to the end first: a walk still running when the pets below are created (a busy machine) would
      // take them in, and the follow would then wait for events that never come.
      let end: string | undefined = first.nextCursor;
      for (let page = await client.listEvents({ limit: 100, cursor: end }); ; ) {
        end = page.nextCursor;
        if (page.items.length < 100) break;
        page = await client.listEvents({ limit: 100, cursor: end });
      }
      const controller = new AbortController();
      const followed: string[] = [];
      const following = (async () => {
        for await (const event of client.events(
          { cursor: end },
          { follow: true, pollIntervalMs: 20, signal: controller.signal },
        )) {
          followed.push(event.type);
          if (followed.length === 2) controller.abort();
        }
      })();
      await client.createPet({ name: 'Late', categoryId: 1 });
      await client.createPet({ name: 'Later', categoryId: 1 });
      await following;
      assert.deepEqual(followed, ['pet.created', 'pet.created']);
    });

    test('getEvent: one event as the feed shows it; an unknown one a PetstoreError 404, a malformed id 400', async (t) => {
      const h = await startHarness(t, backend);
      const client = clientFor(h);
      const rex = await client.createPet({ name: 'Rex', categoryId: 1 });
      await client.placeOrder({ petId: rex.id });
      const feed = await settledFeed((path) => h.call('GET', path), 3);
      for (const event of feed) assert.deepEqual(await client.getEvent(event.id), event);
      const placed = await client.getEvent(feed[1].id);
      assert.equal(placed.type === 'order.placed' && placed.data.petId, rex.id, 'typed by its `type`');
      const missing = await failure(client.getEvent('evt_999999'));
      assert.deepEqual([missing.code, missing.status], ['not_found', 404]);
      assert.match(missing.message, /event evt_999999/);
      const malformed = await failure(client.getEvent('12/../../pets'));
      assert.deepEqual([malformed.code, malformed.status], ['invalid_request', 400]);
    });

    test('orders: place, get, move through the states, list; a refused move is a PetstoreError 409', async (t) => {
      const h = await startHarness(t, backend);
      const client = clientFor(h);
      const pet = await client.createPet({ name: 'Rex', categoryId: 1 });
      const order = await client.placeOrder({ petId: pet.id, quantity: 2 });
      assert.equal(order.petId, pet.id);
      assert.equal(order.quantity, 2);
      assert.equal(order.status, 'placed');
      assert.equal(order.complete, false);
      assert.deepEqual(await client.getOrder(order.id), order);
      assert.equal((await client.getPet(pet.id)).status, 'pending');

      const taken = await failure(client.placeOrder({ petId: pet.id }));
      assert.deepEqual([taken.code, taken.status], ['conflict', 409]);
      assert.match(taken.message, /is pending, not available/);
      const missing = await failure(client.placeOrder({ petId: 999_999 }));
      assert.deepEqual([missing.code, missing.status], ['not_found', 404]);

      assert.equal((await client.changeOrderStatus(order.id, { status: 'approved' })).status, 'approved');
      const delivered = await client.changeOrderStatus(order.id, { status: 'delivered' });
      assert.deepEqual([delivered.status, delivered.complete], ['delivered', true]);
      assert.equal((await client.getPet(pet.id)).status, 'sold');
      const refused = await failure(client.changeOrderStatus(order.id, { status: 'cancelled' }));
      assert.equal(refused.code, 'conflict');
      assert.equal(refused.status, 409);
      assert.match(refused.message, /cannot move from delivered to cancelled; delivered is final/);
      assert.equal(refused.retryAfter, undefined);

      const other = await client.placeOrder({ petId: (await client.createPet({ name: 'Tom', categoryId: 1 })).id });
      assert.deepEqual(
        (await collect(client.orders())).map((each) => each.id),
        [order.id, other.id],
      );
      assert.deepEqual((await client.listOrders({ status: 'placed' })).items, [other]);
      assert.deepEqual(await collect(client.orders({ status: 'delivered', limit: 1 })), [
        { ...order, status: 'delivered', complete: true },
      ]);
    });

    test('updatePet and deletePet: the etag on every pet answered, ifMatch, 412 and 409', async (t) => {
      const h = await startHarness(t, backend);
      const client = clientFor(h);
      const rexx = await client.createPet({ name: 'Rexx', categoryId: 1 });
      assert.equal(rexx.etag, '"1"');
      assert.deepEqual(Object.keys(rexx).sort(), ['categoryId', 'id', 'name', 'status'], 'etag is not enumerable');
      const rex = await client.updatePet(rexx.id, { name: 'Rex' }, { ifMatch: rexx.etag });
      assert.deepEqual(rex, { ...rexx, name: 'Rex' });
      assert.equal(rex.etag, '"2"');
      assert.equal((await client.getPet(rex.id)).etag, '"2"');
      const stale = await failure(client.updatePet(rex.id, { categoryId: 2 }, { ifMatch: rexx.etag }));
      assert.deepEqual([stale.code, stale.status], ['precondition_failed', 412]);
      assert.match(stale.message, /its ETag is now "2"/);
      const order = await client.placeOrder({ petId: rex.id });
      const held = await failure(client.updatePet(rex.id, { status: 'sold' }));
      assert.deepEqual([held.code, held.status], ['conflict', 409]);
      assert.match(held.message, new RegExp(`order ${order.id} \\(placed\\)`));
      assert.equal((await failure(client.deletePet(rex.id))).status, 409);
      await client.changeOrderStatus(order.id, { status: 'cancelled' });
      assert.equal((await failure(client.deletePet(rex.id, { ifMatch: '"2"' }))).code, 'precondition_failed');
      assert.equal(await client.deletePet(rex.id, { ifMatch: '"4"' }), undefined);
      const gone = await failure(client.deletePet(rex.id));
      assert.deepEqual([gone.code, gone.status], ['not_found', 404]);
      assert.deepEqual((await client.listPets()).items, []);
    });

    test('the service refusing: 401 with a bad key, 403 without the scope, 400 invalid body, 404', async (t) => {
      const h = await startHarness(t, backend);
      const stranger = new PetstoreClient({ baseUrl: h.url, apiKey: 'psk_000000000000000000000000000000000000' });
      const unauthorized = await failure(stranger.listPets());
      assert.deepEqual([unauthorized.code, unauthorized.status], ['unauthorized', 401]);
      assert.equal(unauthorized.name, 'PetstoreError');
      assert.ok(unauthorized.message.length > 0);

      const reader = new PetstoreClient({ baseUrl: h.url, apiKey: h.keys.read });
      const forbidden = await failure(reader.createPet({ name: 'Rex', categoryId: 1 }));
      assert.deepEqual([forbidden.code, forbidden.status], ['forbidden', 403]);

      const client = clientFor(h);
      const blank = await failure(client.createPet({ name: '   ', categoryId: 1 }));
      assert.deepEqual([blank.code, blank.status], ['invalid_request', 400]);
      assert.match(blank.message, /name/);
      const category = await failure(client.createPet({ name: 'Rex', categoryId: 0 }));
      assert.deepEqual([category.code, category.status], ['invalid_request', 400]);
      assert.match(category.message, /categoryId/);
      const limit = await failure(client.listPets({ limit: 101 }));
      assert.deepEqual([limit.code, limit.status], ['invalid_request', 400]);

      const missing = await failure(client.getPet(123_456));
      assert.deepEqual(
        [missing.code, missing.status, missing.message],
        ['not_found', 404, 'pet 123456 does not exist'],
      );
      const noOrder = await failure(client.getOrder(123_456));
      assert.deepEqual([noOrder.code, noOrder.status], ['not_found', 404]);
      assert.deepEqual((await client.listPets()).items, [], 'nothing was created');
    });

    test("the caller's Idempotency-Key: a repeated createPet answers the first pet and creates nothing", async (t) => {
      const h = await startHarness(t, backend);
      const client = clientFor(h);
      const first = await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'order-42 "rex"' });
      const again = await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'order-42 "rex"' });
      assert.deepEqual(again, first);
      const mismatch = await failure(
        client.createPet({ name: 'Tom', categoryId: 1 }, { idempotencyKey: 'order-42 "rex"' }),
      );
      assert.deepEqual([mismatch.code, mismatch.status], ['idempotency_mismatch', 422]);
      assert.deepEqual((await client.listPets()).items, [first]);
    });

    test('429 from the rate limit: the client waits Retry-After and succeeds, creating each pet once', async (t) => {
      // One request at once, then one every 2 s: the second create is refused, with Retry-After: 2.
      const h = await startHarness(t, backend, {
        rateLimit: () => ({ limiter: new MemoryRateLimiter(), perKey: { perSecond: 0.5, burst: 1 } }),
      });
      const recording = recordingFetch();
      const client = clientFor(h, { fetch: recording.fetch });
      await client.createPet({ name: 'pet-0', categoryId: 1 });
      const started = performance.now();
      const second = await client.createPet({ name: 'pet-1', categoryId: 1 });
      const elapsed = performance.now() - started;

      const statuses = recording.responses.map((response) => response.status);
      const limited = recording.responses.filter((response) => response.status === 429);
      assert.ok(limited.length >= 1, `statuses ${statuses.join()}: the burst of 1 was used up`);
      const retryAfter = Number(limited[0]?.headers.get('retry-after'));
      assert.ok(retryAfter >= 1, 'the service asked to wait');
      assert.ok(elapsed >= retryAfter * 1000, `waited ${elapsed.toFixed(0)} ms, Retry-After ${retryAfter} s`);
      assert.equal(statuses.filter((status) => status === 201).length, 2);
      assert.equal(second.name, 'pet-1');

      const listed = await h.call('GET', '/v1/pets?limit=100', { key: h.keys.read });
      assert.deepEqual(
        listed.json.map((pet: Pet) => pet.name),
        ['pet-0', 'pet-1'],
      );
    });

    test('webhook endpoints: create, list and page, get, change, delete; another owner sees none of them', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const client = clientFor(h);
      const created = [];
      for (let i = 0; i < 3; i++) {
        created.push(
          await client.createWebhookEndpoint({ url: `https://hooks.example.com/${i}`, description: `n${i}` }),
        );
      }
      const [first] = created;
      assert.ok(first);
      assert.match(first.secret ?? '', /^whsec_/);
      const page = await client.listWebhookEndpoints({ limit: 2 });
      assert.deepEqual(
        page.items.map((endpoint) => endpoint.id),
        created.slice(0, 2).map((endpoint) => endpoint.id),
      );
      assert.ok(page.nextCursor !== undefined);
      const all = [];
      for await (const endpoint of client.webhookEndpoints({ limit: 2 })) all.push(endpoint.id);
      assert.deepEqual(
        all,
        created.map((endpoint) => endpoint.id),
      );
      const shown = await client.getWebhookEndpoint(first.id);
      assert.equal(shown.url, 'https://hooks.example.com/0');
      assert.equal('secret' in shown, false, 'never the secret again');
      const changed = await client.changeWebhookEndpoint(first.id, { description: 'renamed', enabled: false });
      assert.deepEqual([changed.description, changed.enabled], ['renamed', false]);
      assert.equal(shown.ordering, 'subject');
      const unordered = await client.createWebhookEndpoint({ url: 'https://hooks.example.com/3', ordering: 'none' });
      assert.equal(unordered.ordering, 'none');
      assert.equal((await client.changeWebhookEndpoint(unordered.id, { ordering: 'subject' })).ordering, 'subject');
      assert.equal(shown.rateLimit, null);
      const limited = await client.changeWebhookEndpoint(unordered.id, { rateLimit: 20 });
      assert.equal(limited.rateLimit, 20);
      assert.equal((await client.changeWebhookEndpoint(unordered.id, { rateLimit: null })).rateLimit, null);
      assert.equal(await client.deleteWebhookEndpoint(unordered.id), undefined);
      const other = clientFor(h, { apiKey: await h.issueKey('partner', ['read', 'webhooks'], 'partner') });
      assert.deepEqual((await other.listWebhookEndpoints()).items, []);
      assert.deepEqual([(await failure(other.getWebhookEndpoint(first.id))).status], [404]);
      assert.equal(await client.deleteWebhookEndpoint(first.id), undefined);
      const gone = await failure(client.getWebhookEndpoint(first.id));
      assert.deepEqual([gone.status, gone.code], [404, 'not_found']);
      assert.deepEqual([(await failure(client.deleteWebhookEndpoint(first.id))).status], [404]);
      const bad = await failure(client.createWebhookEndpoint({ url: 'ftp://nope' }));
      assert.deepEqual([bad.status, bad.code], [400, 'invalid_request']);
    });

    test('rotateWebhookSecret: the new secret and the overlap; 404 for an unknown endpoint', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const client = clientFor(h);
      const { id, secret } = await createEndpoint(h);
      const rotated = await client.rotateWebhookSecret(id);
      assert.match(rotated.secret ?? '', /^whsec_/);
      assert.notEqual(rotated.secret, secret);
      assert.ok(Date.parse(rotated.previousSecretExpiresAt ?? '') > Date.now() + 86_000_000, 'a day by default');
      assert.equal(
        (await client.rotateWebhookSecret(id, { previousSecretExpiresIn: 0 })).previousSecretExpiresAt,
        null,
      );
      const error = await failure(client.rotateWebhookSecret(id + 1));
      assert.deepEqual([error.status, error.code], [404, 'not_found']);
    });

    test('listWebhookDeliveries: filters by status and event, pages on with them; 400 names a bad one', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const client = clientFor(h);
      const { id } = await createEndpoint(h);
      assert.deepEqual(await client.listWebhookDeliveries(id, { status: 'failed', eventId: 'evt_1' }), {
        items: [],
        nextCursor: undefined,
      });
      const bad = await failure(client.listWebhookDeliveries(id, { eventId: 'event-1' }));
      assert.deepEqual([bad.status, bad.code], [400, 'invalid_request']);
      assert.match(bad.message, /query parameter "eventId"/);
      assert.equal((await failure(client.listWebhookDeliveries(id + 1))).status, 404);
    });

    test('resendWebhookEvent and recoverWebhookDeliveries: 202; 404 and 400 naming what is wrong', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const client = clientFor(h);
      const { id } = await createEndpoint(h, { events: ['pet.created'] });
      await h.createPets(1);
      const [row] = await h.sql('SELECT seq FROM events');
      const eventId = `evt_${Number(row?.seq)}`;
      assert.deepEqual(await client.resendWebhookEvent(id, eventId), {
        eventId,
        status: 'pending',
        // No dispatcher here: its delivery is still owed, so nothing was added.
        queued: false,
        endpointEnabled: true,
      });
      const error = await failure(client.resendWebhookEvent(id, 'evt_999'));
      assert.deepEqual([error.status, error.code], [404, 'not_found']);
      assert.match(error.message, /event evt_999/);
      const since = new Date(Date.now() - 60_000).toISOString();
      assert.deepEqual(await client.recoverWebhookDeliveries(id, { since }), { queued: 0, endpointEnabled: true });
      const late = await failure(client.recoverWebhookDeliveries(id, { since, until: '2020-01-01T00:00:00Z' }));
      assert.deepEqual([late.status, late.code], [400, 'invalid_request']);
    });

    test('sendWebhookTest: 202 with the test event id, logged as a test; 404 for an unknown endpoint', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const client = clientFor(h);
      const { id } = await createEndpoint(h);
      const { eventId } = await client.sendWebhookTest(id);
      assert.match(eventId, /^evt_[1-9][0-9]*$/);
      assert.notEqual((await client.sendWebhookTest(id)).eventId, eventId, 'each test is its own event');
      const unknown = await failure(client.sendWebhookTest(id + 1));
      assert.deepEqual([unknown.status, unknown.code], [404, 'not_found']);
      assert.deepEqual((await client.listEvents()).items, [], 'not on the feed');
    });

    test("portalLink: a link for the key's owner; another owner needs admin (403)", async (t) => {
      const h = await startWebhookHarness(t, backend);
      const client = clientFor(h);
      const link = await client.portalLink();
      assert.equal(link.owner, 'default');
      assert.match(link.url, /\/portal#[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      assert.ok(Date.parse(link.expiresAt) > Date.now());
      const refused = await failure(client.portalLink({ owner: 'globex' }));
      assert.deepEqual([refused.status, refused.code], [403, 'forbidden']);
      const { id } = await createEndpoint(h);
      const endpoint = (await h.call('GET', `/v1/webhooks/${id}`)).json as WebhookEndpoint;
      assert.equal(endpoint.owner, 'default', 'the owner field, typed');
    });
  });
});

interface Attempt {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

type Answer = (attempt: number, request: IncomingMessage, response: ServerResponse) => void;

/** A stand-in for the service that answers each attempt as `answer` says, recording what it received. */
async function fakeService(t: TestContext, answer: Answer): Promise<{ url: string; attempts: Attempt[] }> {
  const attempts: Attempt[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      attempts.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      answer(attempts.length, request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, attempts };
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) {
  send(response, status, { code, message: `${code} (test)`, status }, headers);
}

const PET: Pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

describe('client retries (a stand-in service)', () => {
  test('a POST survives a lost connection and a 503, sending one Idempotency-Key on every attempt', async (t) => {
    const service = await fakeService(t, (attempt, request, response) => {
      if (attempt === 1) request.socket.destroy();
      else if (attempt === 2) sendError(response, 503, 'service_unavailable', { 'retry-after': '1' });
      else send(response, 201, PET, { location: '/v1/pets/1' });
    });
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test' });
    const started = performance.now();
    assert.deepEqual(await client.createPet({ name: 'Rex', categoryId: 1 }), PET);
    assert.ok(performance.now() - started >= 1000, 'waited the Retry-After of the 503');
    assert.equal(service.attempts.length, 3);
    const keys = new Set(service.attempts.map((attempt) => attempt.headers['idempotency-key']));
    assert.equal(keys.size, 1, `one key on every attempt: ${[...keys].join(' ')}`);
    assert.match(String([...keys][0]), /^"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"$/);
    for (const attempt of service.attempts) {
      assert.equal(attempt.method, 'POST');
      assert.equal(attempt.url, '/v1/pets');
      assert.equal(attempt.headers.authorization, 'Bearer psk_test');
      assert.equal(attempt.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(attempt.body), { name: 'Rex', categoryId: 1 });
    }
  });

  test('each createPet call has its own key; a GET carries none and is retried after a lost connection', async (t) => {
    const service = await fakeService(t, (attempt, request, response) => {
      if (request.method === 'GET' && attempt === 3) request.socket.destroy();
      else if (request.method === 'GET') send(response, 200, [PET]);
      else send(response, 201, PET);
    });
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test' });
    await client.createPet({ name: 'Rex', categoryId: 1 });
    await client.createPet({ name: 'Rex', categoryId: 1 });
    assert.deepEqual(await client.listPets({ status: 'available' }), { items: [PET], nextCursor: undefined });
    const [first, second, lost, retried] = service.attempts;
    assert.notEqual(first?.headers['idempotency-key'], second?.headers['idempotency-key']);
    assert.equal(lost?.headers['idempotency-key'], undefined);
    assert.equal(retried?.url, '/v1/pets?status=available');
  });

  test("a POST retries the 409 the service answers while the key's first attempt is still running", async (t) => {
    const service = await fakeService(t, (attempt, _request, response) => {
      if (attempt === 1) sendError(response, 409, 'conflict', { 'retry-after': '0' });
      else send(response, 201, PET, { 'idempotent-replayed': 'true' });
    });
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test' });
    assert.deepEqual(await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'k-1' }), PET);
    assert.deepEqual(
      service.attempts.map((attempt) => attempt.headers['idempotency-key']),
      ['"k-1"', '"k-1"'],
    );
  });

  test('retries exhausted: the PetstoreError of the last attempt', async (t) => {
    const service = await fakeService(t, (_attempt, _request, response) =>
      sendError(response, 503, 'service_unavailable', { 'retry-after': '0' }),
    );
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test', retries: 2 });
    const error = await failure(client.listPets());
    assert.deepEqual([error.code, error.status, error.retryAfter], ['service_unavailable', 503, 0]);
    assert.equal(service.attempts.length, 3, 'the first attempt and two retries');
    const never = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test', retries: 0 });
    await failure(never.listPets());
    assert.equal(service.attempts.length, 4, 'retries: 0 sends once');
  });

  test(`a Retry-After beyond ${MAX_RETRY_AFTER_SECONDS} s fails at once, saying how long`, async (t) => {
    const service = await fakeService(t, (_attempt, _request, response) =>
      sendError(response, 429, 'rate_limited', { 'retry-after': '3600' }),
    );
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test' });
    const started = performance.now();
    const error = await failure(client.createPet({ name: 'Rex', categoryId: 1 }));
    assert.ok(performance.now() - started < 1000);
    assert.deepEqual([error.code, error.status, error.retryAfter], ['rate_limited', 429, 3600]);
    assert.equal(service.attempts.length, 1);
  });

  test('changeOrderStatus is retried after 429 but not after 503 (the move may have been made)', async (t) => {
    const service = await fakeService(t, (attempt, _request, response) => {
      if (attempt === 1) sendError(response, 429, 'rate_limited', { 'retry-after': '0' });
      else sendError(response, 503, 'service_unavailable', { 'retry-after': '0' });
    });
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test' });
    const error = await failure(client.changeOrderStatus(5, { status: 'approved' }));
    assert.equal(error.status, 503);
    assert.deepEqual(
      service.attempts.map((attempt) => [attempt.method, attempt.url, attempt.headers['idempotency-key']]),
      [
        ['PATCH', '/v1/store/orders/5', undefined],
        ['PATCH', '/v1/store/orders/5', undefined],
      ],
    );
  });

  test('rotateWebhookSecret sends no Idempotency-Key and, like a PATCH, is not retried after a 503', async (t) => {
    const service = await fakeService(t, (attempt, _request, response) => {
      if (attempt === 1) sendError(response, 429, 'rate_limited', { 'retry-after': '0' });
      else sendError(response, 503, 'service_unavailable', { 'retry-after': '0' });
    });
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test' });
    const error = await failure(client.rotateWebhookSecret(3, { previousSecretExpiresIn: 60 }));
    assert.equal(error.status, 503);
    assert.deepEqual(
      service.attempts.map((attempt) => [
        attempt.method,
        attempt.url,
        attempt.headers['idempotency-key'],
        attempt.body,
      ]),
      Array(2).fill(['POST', '/v1/webhooks/3/rotate-secret', undefined, '{"previousSecretExpiresIn":60}']),
    );
  });

  test('a timeout per attempt, retried; the caller aborting ends the call, waits included', async (t) => {
    const service = await fakeService(t, (_attempt, request, response) => {
      if (request.url === '/v1/store/orders/1')
        sendError(response, 503, 'service_unavailable', { 'retry-after': '30' });
      // Otherwise no answer at all.
    });
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test', timeoutMs: 100, retries: 1 });
    const timeout = await failure(client.listPets());
    assert.deepEqual([timeout.code, timeout.status], ['timeout', 0]);
    assert.equal(service.attempts.length, 2);

    const started = performance.now();
    const aborted = await failure(client.getOrder(1, { signal: AbortSignal.timeout(200) }));
    assert.deepEqual([aborted.code, aborted.status], ['aborted', 0]);
    assert.ok(performance.now() - started < 5000, 'did not wait out the 30 s Retry-After');
    assert.equal(service.attempts.length, 3);
  });

  test('a lost connection that never recovers: network_error, status 0, with the cause', async (t) => {
    const service = await fakeService(t, (_attempt, request) => request.socket.destroy());
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test', retries: 1 });
    const error = await failure(client.listPets());
    assert.deepEqual([error.code, error.status], ['network_error', 0]);
    assert.ok(error.cause instanceof TypeError);
    assert.match(error.message, /could not reach the service/);
    assert.equal(service.attempts.length, 2);
  });

  test("an answer that is not the API's (a proxy page): invalid_response with its status, not retried", async (t) => {
    const service = await fakeService(t, (_attempt, _request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html>Bad Gateway</html>');
    });
    const client = new PetstoreClient({ baseUrl: service.url, apiKey: 'psk_test' });
    const error = await failure(client.listPets());
    assert.deepEqual([error.code, error.status], ['invalid_response', 502]);
    assert.equal(service.attempts.length, 1);
  });
});

describe('client retry policy and paging, unit', () => {
  const error = (code: string, status: number, extra: { retryAfter?: number; cause?: unknown } = {}) =>
    new PetstoreError({ code, status, message: code, ...extra });
  const refused = new TypeError('fetch failed', {
    cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
  });
  const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) });

  test('which failures each method retries', () => {
    const cases = [
      ['rate_limited', 429, {}, { GET: true, POST: true, PATCH: true }],
      ['service_unavailable', 503, {}, { GET: true, POST: true, PATCH: false }],
      ['network_error', 0, { cause: reset }, { GET: true, POST: true, PATCH: false }],
      ['network_error', 0, { cause: refused }, { GET: true, POST: true, PATCH: true }],
      ['timeout', 0, {}, { GET: true, POST: true, PATCH: false }],
      ['conflict', 409, { retryAfter: 1 }, { GET: false, POST: true, PATCH: false }],
      ['conflict', 409, {}, { GET: false, POST: false, PATCH: false }],
      ['aborted', 0, {}, { GET: false, POST: false, PATCH: false }],
      ['internal_error', 500, {}, { GET: false, POST: false, PATCH: false }],
      ['invalid_request', 400, {}, { GET: false, POST: false, PATCH: false }],
    ] as const;
    for (const [code, status, extra, expected] of cases) {
      for (const method of ['GET', 'POST', 'PATCH'] as const) {
        assert.equal(isRetryable(method, error(code, status, extra)), expected[method], `${method} ${code} ${status}`);
      }
    }
  });

  test('backoff: full jitter under an exponential cap; Retry-After exactly, unless beyond the maximum', () => {
    for (let retry = 0; retry < 8; retry++) {
      const bound = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
      for (let i = 0; i < 50; i++) {
        const delay = retryDelayMs(error('service_unavailable', 503), retry) ?? -1;
        assert.ok(delay >= 0 && delay <= bound, `retry ${retry}: ${delay} ms within ${bound}`);
      }
    }
    assert.equal(retryDelayMs(error('rate_limited', 429, { retryAfter: 3 }), 5), 3000);
    assert.equal(retryDelayMs(error('rate_limited', 429, { retryAfter: MAX_RETRY_AFTER_SECONDS }), 0), 60_000);
    assert.equal(retryDelayMs(error('rate_limited', 429, { retryAfter: MAX_RETRY_AFTER_SECONDS + 1 }), 0), undefined);
  });

  test('Retry-After: delta-seconds or an HTTP-date', () => {
    const now = Date.parse('2030-12-05T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Thu, 05 Dec 2030 00:00:10 GMT', now), 10);
    assert.equal(parseRetryAfter('Wed, 04 Dec 2030 00:00:00 GMT', now), 0, 'a date in the past: now');
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter(null, now), undefined);
  });

  test('the next cursor from a Link header, relative or absolute', () => {
    assert.equal(nextCursor('</v1/pets?limit=20&cursor=abc.def>; rel="next"'), 'abc.def');
    assert.equal(nextCursor('<https://pets.example.com/v1/pets?cursor=x_y-z&status=sold>; rel=next'), 'x_y-z');
    assert.equal(
      nextCursor('</v1/pets>; rel="successor-version", </v1/openapi.json>; rel="deprecation"'),
      undefined,
      'links of other relations',
    );
    assert.equal(nextCursor('</a>; rel="prev", </b?cursor=2>; title="x"; rel="next last"'), '2');
    assert.equal(nextCursor(null), undefined);
  });
});
