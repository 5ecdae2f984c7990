import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { testLookup } from '../helpers/webhooks.js';

/**
 * Owners, black-box over HTTP: every webhook operation against one's own endpoint, another owner's, with an
 * admin key and with a key lacking the scope; lists, the owner named on create, the bound per owner, and
 * events about endpoints kept with their owner.
 */

const OPTIONS: HarnessOptions = { webhooks: { allowPrivateUrls: true, lookup: testLookup } };
const URL = 'https://hooks.example.com/in';

interface Keys {
  readonly acme: string;
  readonly globex: string;
  readonly admin: string;
  /** Of acme, but without `webhooks`: it reads and writes pets. */
  readonly acmePets: string;
}

async function ownersHarness(t: TestContext, backend: StoreBackend, options: HarnessOptions = OPTIONS) {
  const h = await startHarness(t, backend, options);
  const keys: Keys = {
    acme: await h.issueKey('acme-key', ['read', 'webhooks'], 'acme'),
    globex: await h.issueKey('globex-key', ['read', 'webhooks'], 'globex'),
    admin: await h.issueKey('operator', ['read', 'write', 'webhooks', 'admin'], 'operator'),
    acmePets: await h.issueKey('acme-pets', ['read', 'write'], 'acme'),
  };
  return { h, keys };
}

async function create(h: Harness, key: string, body: Record<string, unknown> = {}) {
  const result = await h.call('POST', '/v1/webhooks', { key, body: { url: URL, ...body } });
  assert.equal(result.status, 201, result.text);
  return result.json as { id: number; owner: string; secret: string };
}

/** Every operation on one endpoint, with the status it answers its owner (bodies that succeed). */
function operations(id: number, eventId: string) {
  const since = new Date(Date.now() - 3_600_000).toISOString();
  return [
    ['GET', `/v1/webhooks/${id}`, undefined, 200],
    ['PATCH', `/v1/webhooks/${id}`, { description: 'changed' }, 200],
    ['GET', `/v1/webhooks/${id}/deliveries`, undefined, 200],
    ['POST', `/v1/webhooks/${id}/resend`, { eventId }, 202],
    ['POST', `/v1/webhooks/${id}/recover`, { since }, 202],
    ['POST', `/v1/webhooks/${id}/test`, undefined, 202],
    ['POST', `/v1/webhooks/${id}/rotate-secret`, undefined, 200],
    ['DELETE', `/v1/webhooks/${id}`, undefined, 204],
  ] as const;
}

function suite(backend: StoreBackend) {
  test('every operation × own key, another owner’s key, admin, a key without the scope', async (t) => {
    const { h, keys } = await ownersHarness(t, backend);
    const [pet] = await h.createPets(1);
    const feed = await h.call('GET', '/v1/events');
    const eventId = feed.json.find((event: { data: { id: number } }) => event.data.id === pet.id).id as string;
    for (const [who, key] of [
      ['own key', keys.acme],
      ['admin', keys.admin],
    ] as const) {
      const { id } = await create(h, keys.acme, { events: ['pet.created'] });
      for (const [method, path, body, status] of operations(id, eventId)) {
        const stranger = await h.call(method, path, { key: keys.globex, body });
        const never = await h.call(method, path.replace(`/${id}`, '/999999'), { key: keys.globex, body });
        const message = expectError(stranger, 404, 'not_found');
        assert.equal(message, expectError(never, 404, 'not_found').replace('999999', String(id)), `${method} ${path}`);
        assert.doesNotMatch(stranger.text, /acme|hooks\.example/, 'a 404 tells nothing of the endpoint');
        expectError(await h.call(method, path, { key: keys.acmePets, body }), 403, 'forbidden');
        const allowed = await h.call(method, path, { key, body });
        assert.equal(allowed.status, status, `${who}: ${method} ${path}: ${allowed.text}`);
      }
    }
    // The refusals changed nothing: the stranger's PATCH and DELETE never reached the endpoint.
    const survivor = await create(h, keys.acme);
    await h.call('DELETE', `/v1/webhooks/${survivor.id}`, { key: keys.globex });
    await h.call('POST', `/v1/webhooks/${survivor.id}/rotate-secret`, { key: keys.globex });
    const kept = await h.call('GET', `/v1/webhooks/${survivor.id}`, { key: keys.acme });
    assert.equal(kept.status, 200);
    assert.equal(kept.json.previousSecretExpiresAt, null, 'not rotated by the other owner');
    expectError(await h.call('GET', '/v1/webhooks', { key: keys.acmePets }), 403, 'forbidden');
    expectError(await h.call('POST', '/v1/webhooks', { key: keys.acmePets, body: { url: URL } }), 403, 'forbidden');
  });

  test('lists show one owner’s endpoints; admin sees all and filters; owner on create', async (t) => {
    const { h, keys } = await ownersHarness(t, backend);
    const a = await create(h, keys.acme);
    const g = await create(h, keys.globex);
    const forGlobex = await create(h, keys.admin, { owner: 'globex' });
    assert.deepEqual([a.owner, g.owner, forGlobex.owner], ['acme', 'globex', 'globex']);
    const ids = async (key: string, query = '') =>
      (await h.call('GET', `/v1/webhooks${query}`, { key })).json.map((e: { id: number }) => e.id);
    assert.deepEqual(await ids(keys.acme), [a.id]);
    assert.deepEqual(await ids(keys.globex), [g.id, forGlobex.id]);
    assert.deepEqual(await ids(keys.admin), [a.id, g.id, forGlobex.id]);
    assert.deepEqual(await ids(keys.admin, '?owner=globex'), [g.id, forGlobex.id]);
    assert.deepEqual(await ids(keys.acme, '?owner=acme'), [a.id]);
    const nosy = await h.call('GET', '/v1/webhooks?owner=globex', { key: keys.acme });
    assert.match(expectError(nosy, 403, 'forbidden'), /owner "acme" only.*admin/);
    const planted = await h.call('POST', '/v1/webhooks', { key: keys.acme, body: { url: URL, owner: 'globex' } });
    expectError(planted, 403, 'forbidden');
    assert.equal((await create(h, keys.acme, { owner: 'acme' })).owner, 'acme');
    const badName = await h.call('POST', '/v1/webhooks', {
      key: keys.admin,
      body: { url: URL, owner: 'Not An Owner' },
    });
    assert.match(expectError(badName, 400, 'invalid_request'), /body\.owner/);
    assert.deepEqual(await ids(keys.globex), [g.id, forGlobex.id], 'the refusals created nothing');

    // A cursor of one owner's list is no cursor of another's.
    await create(h, keys.globex);
    const first = await h.call('GET', '/v1/webhooks?limit=1', { key: keys.globex });
    const cursor = /cursor=([^&>]+)/.exec(first.headers.get('link') ?? '')?.[1];
    assert.ok(cursor, 'a next page');
    expectError(
      await h.call('GET', `/v1/webhooks?limit=1&cursor=${cursor}`, { key: keys.acme }),
      400,
      'invalid_request',
    );
  });

  test('WEBHOOK_ENDPOINTS_PER_OWNER: one more is 409; owners racing at the bound never pass it', async (t) => {
    const { h, keys } = await ownersHarness(t, backend, { ...OPTIONS, webhookEndpointsPerOwner: 3 });
    for (let i = 0; i < 3; i++) await create(h, keys.acme);
    const over = await h.call('POST', '/v1/webhooks', { key: keys.acme, body: { url: URL } });
    assert.match(expectError(over, 409, 'conflict'), /owner "acme" has 3 webhook endpoints/);
    const racing = await Promise.all(
      Array.from({ length: 12 }, () => h.call('POST', '/v1/webhooks', { key: keys.globex, body: { url: URL } })),
    );
    assert.deepEqual(
      racing.map((r) => r.status).sort(),
      [201, 201, 201, ...Array<number>(9).fill(409)],
      'exactly the bound',
    );
    const other = await h.startInstance();
    await h.call('DELETE', `/v1/webhooks/${racing.find((r) => r.status === 201)?.json.id}`, { key: keys.globex });
    const both = await Promise.all(
      [h, other, h, other].map((i) => i.call('POST', '/v1/webhooks', { key: keys.globex, body: { url: URL } })),
    );
    assert.equal(both.filter((r) => r.status === 201).length, 1, 'two instances: one more fits');
    assert.equal((await h.call('GET', '/v1/webhooks?limit=100', { key: keys.globex })).json.length, 3);
  });

  test('webhook_endpoint events stay with their owner; a revoked last key leaves its endpoints delivering', async (t) => {
    const { h, keys } = await ownersHarness(t, backend, {
      webhooks: { allowPrivateUrls: true },
      webhookDelivery: { timeoutMs: 1000, retrySchedule: [100] },
    });
    const gone = await startReceiver(t, () => ({ status: 410 }));
    const acmeWatcher = await startReceiver(t);
    const globexWatcher = await startReceiver(t);
    const disabledType = { events: ['webhook_endpoint.disabled'] };
    const doomed = await create(h, keys.acme, { url: gone.url, events: ['pet.created'] });
    const acmeWatching = await create(h, keys.acme, { url: acmeWatcher.url, ...disabledType });
    const globexWatching = await create(h, keys.globex, { url: globexWatcher.url, ...disabledType });
    await create(h, keys.globex, { url: globexWatcher.url, events: ['pet.created'] });
    await h.createPets(1);
    const disabled = (key: string) =>
      h.call('GET', '/v1/events?type=webhook_endpoint.disabled', { key }).then((r) => r.json as { id: string }[]);
    const [event] = await eventually('the disable on the feed', async () => {
      const page = await disabled(keys.acme);
      return page.length > 0 ? page : undefined;
    });
    assert.equal((await disabled(keys.admin)).length, 1, 'admin keys see every owner’s');
    assert.equal((await disabled(keys.globex)).length, 0, 'another owner’s key does not');
    const all = (await h.call('GET', '/v1/events?limit=100', { key: keys.globex })).json as { type: string }[];
    assert.ok(!all.some((e) => e.type === 'webhook_endpoint.disabled'), 'nor in the unfiltered feed');
    assert.equal((await h.call('GET', `/v1/webhooks/${doomed.id}`, { key: keys.acme })).json.enabled, false);
    await acmeWatcher.until((got) => got.some((r) => r.headers['webhook-id'] === event?.id), 3000);

    // Resent to another owner's endpoint, it reads as an event never recorded: no type told, by key or portal.
    const resend = (id: number, auth: { key: string | null; headers?: Record<string, string> }) =>
      h.call('POST', `${auth.key === null ? '/portal' : ''}/v1/webhooks/${id}/resend`, {
        ...auth,
        body: { eventId: event?.id },
      });
    const unknown = `event ${event?.id} does not exist: never recorded, or removed after EVENT_RETENTION_DAYS`;
    assert.equal(expectError(await resend(globexWatching.id, { key: keys.globex }), 404, 'not_found'), unknown);
    const made = await h.call('POST', '/v1/webhooks/portal-links', { key: keys.globex });
    const token = new globalThis.URL(made.json.url).hash.slice(1);
    // As the portal's page sends them: from its own origin.
    const traded = await h.call('POST', '/portal/session', { key: null, body: { token }, headers: { origin: h.url } });
    const cookie = (traded.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const portal = await resend(globexWatching.id, { key: null, headers: { cookie, origin: h.url } });
    assert.equal(expectError(portal, 404, 'not_found'), unknown);
    assert.equal((await resend(acmeWatching.id, { key: keys.acme })).status, 202, 'its owner’s endpoint takes it');
    assert.equal((await resend(acmeWatching.id, { key: keys.admin })).status, 202, 'so does admin’s resend');

    // Globex's last key goes: its endpoints belong to the owner, not the key, and go on delivering.
    await h.store.apiKeys.revoke('globex-key', new Date(), CLI_AUDIT);
    expectError(await h.call('GET', '/v1/webhooks', { key: keys.globex }), 401, 'unauthorized');
    await h.createPets(1);
    await globexWatcher.until((got) => got.filter((r) => r.body.includes('"pet.created"')).length >= 2, 3000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(
      !globexWatcher.received.some((r) => r.headers['webhook-id'] === event?.id),
      'the disable of acme’s endpoint was never sent to globex’s',
    );
  });
}

eachBackend((backend) => {
  describe(`webhook owners [${backend.name}]`, () => suite(backend));
});
