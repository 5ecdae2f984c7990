import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, waitUntil } from '../../dev/eventually.js';
import { PetstoreClient } from '../../src/client/index.js';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * The audit log, black-box over HTTP (docs/decisions/audit-log.md): each change writes one entry naming
 * who made it, what and how it changed; owners read their own, admins every owner's; no entry holds a
 * secret, a key or a token.
 */

const OPTIONS: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [100, 200] },
};

/** Every entry an admin key reads, newest first, following the pages. */
async function allEntries(h: Harness, key: string, query = ''): Promise<any[]> {
  const entries: any[] = [];
  let path: string | undefined = `/v1/audit-log?limit=100${query}`;
  while (path !== undefined) {
    const page = await h.call('GET', path, { key });
    assert.equal(page.status, 200, page.text);
    entries.push(...page.json);
    path = /<[^>]*(\/v1\/audit-log\?[^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return entries;
}

/** The entries about one target, oldest first. */
const about = (entries: any[], kind: string, id: number | string) =>
  entries.filter((e) => e.target.kind === kind && e.target.id === String(id)).reverse();

async function call(h: Harness, method: string, path: string, options: Parameters<Harness['call']>[2]) {
  const result = await h.call(method, path, options);
  assert.ok(result.status < 300, `${method} ${path}: ${result.status} ${result.text}`);
  return result;
}

/** Trades a portal link's token for a session cookie, as the page does. */
async function portalSession(h: Harness, key: string) {
  const made = await call(h, 'POST', '/v1/webhooks/portal-links', { key });
  const token = new URL(made.json.url).hash.slice(1);
  const traded = await call(h, 'POST', '/portal/session', { key: null, body: { token }, headers: { origin: h.url } });
  const cookie = (traded.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { token, cookie, linkRequest: made.headers.get('x-request-id') };
}

function suite(backend: StoreBackend) {
  test('each change writes one entry: who, what, and each changed field before and after', async (t) => {
    const h = await startHarness(t, backend, OPTIONS);
    const admin = await h.issueKey('root', ['admin'], 'default');
    const acme = await h.issueKey('acme-key', ['webhooks'], 'acme');
    const acmeKeyId = (await h.store.apiKeys.list()).find((k) => k.name === 'acme-key')?.id;
    const receiver = await startReceiver(t);
    const seen: string[] = [admin, acme, h.keys.all, h.keys.read, h.keys.write];

    const created = await call(h, 'POST', '/v1/webhooks', {
      key: acme,
      body: { url: `${receiver.url}/a`, events: ['order.placed'], description: 'first' },
    });
    const id = created.json.id as number;
    seen.push(created.json.secret);
    await call(h, 'PATCH', `/v1/webhooks/${id}`, {
      key: acme,
      body: { url: `${receiver.url}/b`, description: 'first' },
    });
    // Nothing changed: no entry.
    await call(h, 'PATCH', `/v1/webhooks/${id}`, { key: acme, body: { description: 'first' } });
    await call(h, 'PATCH', `/v1/webhooks/${id}`, { key: admin, body: { enabled: false } });
    await call(h, 'PATCH', `/v1/webhooks/${id}`, { key: acme, body: { enabled: true } });
    const rotated = await call(h, 'POST', `/v1/webhooks/${id}/rotate-secret`, { key: acme, body: {} });
    seen.push(rotated.json.secret);
    const session = await portalSession(h, acme);
    seen.push(session.token, session.cookie.split('=')[1] ?? '');
    const fromPortal = { key: null, headers: { cookie: session.cookie, origin: h.url } };
    await call(h, 'PATCH', `/portal/v1/webhooks/${id}`, { ...fromPortal, body: { description: 'portal' } });
    const removed = await call(h, 'DELETE', `/v1/webhooks/${id}`, { key: acme });
    // An Ed25519 endpoint: its public keys are recorded as they change, its private key never.
    const signed = await call(h, 'POST', '/v1/webhooks', {
      key: acme,
      body: { url: `${receiver.url}/ed`, signature: 'ed25519' },
    });
    const resigned = await call(h, 'POST', `/v1/webhooks/${signed.json.id}/rotate-secret`, { key: acme, body: {} });

    await h.store.apiKeys.revoke('acme-key', new Date(), CLI_AUDIT);

    const entries = await allEntries(h, admin);
    const endpoint = about(entries, 'webhook_endpoint', id);
    assert.deepEqual(
      endpoint.map((e) => [e.action, e.actor.kind]),
      [
        ['webhook_endpoint.created', 'key'],
        ['webhook_endpoint.updated', 'key'],
        ['webhook_endpoint.disabled', 'key'],
        ['webhook_endpoint.enabled', 'key'],
        ['webhook_endpoint.secret_rotated', 'key'],
        ['webhook_endpoint.updated', 'portal'],
        ['webhook_endpoint.deleted', 'key'],
      ],
    );
    const [create, update, disable, enable, rotate, portalUpdate, remove] = endpoint;
    assert.deepEqual(create.actor, { kind: 'key', keyId: acmeKeyId, keyName: 'acme-key', owner: 'acme' });
    assert.deepEqual(create.target, { kind: 'webhook_endpoint', id: String(id), owner: 'acme' });
    assert.equal(create.requestId, created.headers.get('x-request-id'));
    assert.deepEqual(create.changes.url, { before: null, after: `${receiver.url}/a` });
    assert.deepEqual(create.changes.events, { before: null, after: ['order.placed'] });
    assert.deepEqual(update.changes, { url: { before: `${receiver.url}/a`, after: `${receiver.url}/b` } });
    assert.equal(disable.actor.keyName, 'root');
    assert.deepEqual(Object.keys(disable.changes).sort(), ['disabledAt', 'disabledReason', 'enabled']);
    assert.deepEqual(disable.changes.disabledReason, { before: null, after: 'manual' });
    assert.deepEqual(enable.changes.enabled, { before: false, after: true });
    assert.deepEqual(Object.keys(rotate.changes ?? {}), ['previousSecretExpiresAt']);
    assert.deepEqual(portalUpdate.actor, { kind: 'portal', keyId: acmeKeyId, owner: 'acme' });
    assert.deepEqual(portalUpdate.changes, { description: { before: 'first', after: 'portal' } });
    assert.equal(remove.changes.url.before, `${receiver.url}/b`, 'what its URL used to be');
    assert.equal(remove.requestId, removed.headers.get('x-request-id'));

    const links = entries.filter((e) => e.target.kind === 'portal_link').reverse();
    assert.deepEqual(
      links.map((e) => [e.action, e.actor.kind, e.target.owner]),
      [
        ['portal_link.created', 'key', 'acme'],
        ['portal_session.opened', 'portal', 'acme'],
      ],
    );
    assert.equal(links[0].target.id, links[1].target.id, 'one link');
    assert.equal(links[0].requestId, session.linkRequest);
    const key = about(entries, 'api_key', acmeKeyId as number);
    assert.deepEqual(
      key.map((e) => [e.action, e.actor]),
      [
        ['api_key.created', { kind: 'cli' }],
        ['api_key.revoked', { kind: 'cli' }],
      ],
    );
    assert.deepEqual(key[0].changes.scopes, { before: null, after: ['webhooks'] });

    const [signedCreate, signedRotate] = about(entries, 'webhook_endpoint', signed.json.id);
    assert.equal(signedCreate.changes.publicKey.after, signed.json.publicKey);
    assert.deepEqual(signedRotate.changes.publicKey, { before: signed.json.publicKey, after: resigned.json.publicKey });
    for (const body of [signed.json, resigned.json]) if (typeof body.secret === 'string') seen.push(body.secret);

    const text = JSON.stringify(entries);
    for (const secret of seen) {
      assert.ok(secret.length > 10, 'a secret seen');
      assert.ok(!text.includes(secret), `no entry holds ${secret.slice(0, 8)}…`);
    }
    assert.doesNotMatch(text, /whsec_|whsk_|psk_/, 'no secret, no key, not even a part of one');
  });

  test('the service records the endpoints it disables, as the service', async (t) => {
    const h = await startHarness(t, backend, OPTIONS);
    const gone = await startReceiver(t, () => ({ status: 410 }));
    const endpoint = (await call(h, 'POST', '/v1/webhooks', { body: { url: gone.url, events: ['pet.created'] } })).json;
    await h.createPets(1);
    const [disabled] = await eventually('the service disable entry', async () => {
      const found = (await allEntries(h, h.keys.all, '&action=webhook_endpoint.disabled')).filter(
        (e) => e.target.id === String(endpoint.id),
      );
      return found.length > 0 ? found : undefined;
    });
    assert.deepEqual(disabled.actor, { kind: 'service' });
    assert.equal(disabled.requestId, undefined);
    assert.deepEqual(disabled.changes.enabled, { before: true, after: false });
    assert.deepEqual(disabled.changes.disabledReason, { before: null, after: 'gone' });
    const shown = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json;
    assert.equal(disabled.changes.disabledAt.after, shown.disabledAt);
  });

  test('owners read their own entries, admins every owner’s; filters and pages', async (t) => {
    const h = await startHarness(t, backend, OPTIONS);
    const admin = await h.issueKey('root', ['admin'], 'default');
    const acme = await h.issueKey('acme-key', ['webhooks'], 'acme');
    const globex = await h.issueKey('globex-key', ['webhooks'], 'globex');
    // Entries are stamped to the millisecond: a gap each side keeps the keys' entries out of `since`.
    await sleep(3);
    const start = new Date().toISOString();
    await sleep(3);
    const a = (await call(h, 'POST', '/v1/webhooks', { key: acme, body: { url: 'http://127.0.0.1:9/a' } })).json;
    const b = (await call(h, 'POST', '/v1/webhooks', { key: globex, body: { url: 'http://127.0.0.1:9/b' } })).json;
    for (const description of ['one', 'two', 'three']) {
      await call(h, 'PATCH', `/v1/webhooks/${a.id}`, { key: acme, body: { description } });
    }

    const acmeSees = await allEntries(h, acme);
    assert.ok(acmeSees.length >= 5, 'the key, the creation and three changes');
    assert.ok(
      acmeSees.every((e) => e.target.owner === 'acme'),
      'only acme’s',
    );
    assert.ok(!acmeSees.some((e) => e.target.id === String(b.id) && e.target.kind === 'webhook_endpoint'));
    const globexSees = await allEntries(h, globex);
    assert.ok(
      globexSees.every((e) => e.target.owner === 'globex'),
      'only globex’s',
    );
    expectError(await h.call('GET', '/v1/audit-log?owner=acme', { key: globex }), 403, 'forbidden');
    expectError(await h.call('GET', '/v1/audit-log', { key: h.keys.read }), 403, 'forbidden');
    expectError(await h.call('GET', '/v1/audit-log', { key: null }), 401, 'unauthorized');

    const every = await allEntries(h, admin);
    assert.ok(every.some((e) => e.target.owner === 'acme') && every.some((e) => e.target.owner === 'globex'));
    assert.deepEqual(await allEntries(h, admin, '&owner=acme'), acmeSees, 'admin filters by owner');
    const ids = every.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
      'newest first',
    );

    const updates = await allEntries(h, admin, `&action=webhook_endpoint.updated&target=webhook_endpoint/${a.id}`);
    assert.deepEqual(
      updates.map((e) => e.changes.description.after),
      ['three', 'two', 'one'],
    );
    assert.equal((await allEntries(h, admin, `&since=${encodeURIComponent(start)}&owner=globex`)).length, 1);
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.deepEqual(await allEntries(h, admin, `&since=${encodeURIComponent(future)}`), []);

    const first = await call(h, 'GET', '/v1/audit-log?limit=2&owner=acme', { key: admin });
    assert.deepEqual(first.json, acmeSees.slice(0, 2));
    const next = /<[^>]*\?([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
    const cursor = new URLSearchParams(next).get('cursor') ?? '';
    const other = await h.call('GET', `/v1/audit-log?limit=2&owner=globex&cursor=${encodeURIComponent(cursor)}`, {
      key: admin,
    });
    expectError(other, 400, 'invalid_request');
    expectError(await h.call('GET', '/v1/audit-log?target=pet/1', { key: admin }), 400, 'invalid_request');
    expectError(
      await h.call('GET', '/v1/audit-log?since=2030-02-31T00:00:00Z', { key: admin }),
      400,
      'invalid_request',
    );
    expectError(await h.call('GET', '/v1/audit-log?action=pet.created', { key: admin }), 400, 'invalid_request');

    // The typed client reads the same pages.
    const client = new PetstoreClient({ baseUrl: h.url, apiKey: admin });
    const page = await client.listAuditLog({ owner: 'acme', limit: 2 });
    assert.deepEqual(page.items, acmeSees.slice(0, 2));
    const read: unknown[] = [];
    for await (const entry of client.auditLog({ owner: 'acme', limit: 2 })) read.push(entry);
    assert.deepEqual(read, acmeSees);
    const refused = await client.listAuditLog({ action: 'pet.created' as never }).catch((error: unknown) => error);
    assert.equal((refused as { status?: number }).status, 400);

    // The portal shows its owner's entries, by the same handler.
    const { cookie } = await portalSession(h, acme);
    const portal = await call(h, 'GET', '/portal/v1/audit-log?limit=100', { key: null, headers: { cookie } });
    assert.ok(portal.json.length > 0 && portal.json.every((e: any) => e.target.owner === 'acme'));

    // Another instance, on its own connection to the database, reads the same log.
    const again = await h.startInstance();
    assert.deepEqual(await allEntries(again, admin, '&owner=acme'), await allEntries(h, admin, '&owner=acme'));
  });

  test('entries past AUDIT_RETENTION_DAYS (365 by default) are removed', async (t) => {
    let now = new Date();
    const h = await startHarness(t, backend, { ...OPTIONS, clock: () => now });
    await call(h, 'POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/old' } });
    assert.ok((await allEntries(h, h.keys.all)).length > 0);
    now = new Date(now.getTime() + 366 * 86_400_000);
    const later = await h.startInstance();
    await waitUntil(
      'the entries past retention are purged',
      async () => (await allEntries(later, h.keys.all)).length === 0,
    );
  });
}

eachBackend((backend) => {
  describe(`audit log [${backend.name}]`, () => suite(backend));
});
