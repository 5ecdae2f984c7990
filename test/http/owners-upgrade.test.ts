import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../../src/domain/api-key.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { expectError, request } from '../helpers/calls.js';
import { BACKENDS } from '../helpers/stores.js';
import { OPEN_BEFORE } from '../helpers/upgrade.js';

/**
 * Upgrading to owners loses nothing: a database made by the release before them (every migration but the
 * owners' one), with a key that could write and an endpoint, opened by this build. The key keeps managing
 * the endpoint, now the default owner's, and the endpoint's events stay visible to it.
 */

/** The rows the release before would have written, in its columns (no owner anywhere). */
const BEFORE = {
  key: (hash: string, prefix: string) =>
    `INSERT INTO api_keys (name, prefix, hash, scopes, created_at) VALUES ('partner', '${prefix}', '${hash}', 'read,write', 0)`,
  reader: `INSERT INTO api_keys (name, prefix, hash, scopes, created_at) VALUES ('reader', 'psk_reader', 'x', 'read', 0)`,
  endpoint: `INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at)
    VALUES ('https://hooks.example.com/in', 'pet.created,webhook_endpoint.disabled', true, 'whsec_c2VjcmV0', 0)`,
  // Recorded now: retention would remove an older one at start.
  event: (now: string) => `INSERT INTO events (type, at, data) VALUES ('webhook_endpoint.disabled', ${now},
    '{"id": 1, "url": "https://hooks.example.com/in", "events": "pet.created", "description": null, "enabled": false,
      "created_at": 0, "disabled_reason": "gone", "disabled_at": 0, "previous_secret_expires_at": null}')`,
};

/** What the owners' migration, and no earlier one, does. */
const OWNERS_MIGRATION = 'ALTER TABLE api_keys ADD COLUMN owner';

/** The release before owners wrote booleans and times as each backend keeps them. */
const OPEN = {
  sqlite: (t: TestContext, statements: string[]) =>
    OPEN_BEFORE.sqlite(
      t,
      OWNERS_MIGRATION,
      statements.map((statement) => statement.replace('true', '1')),
    ),
  postgres: (t: TestContext, statements: string[]) =>
    OPEN_BEFORE.postgres(
      t,
      OWNERS_MIGRATION,
      statements.map((statement) => statement.replaceAll(', 0', ', to_timestamp(0)')),
    ),
} as const;

for (const backend of BACKENDS) {
  describe(`upgrading to owners [${backend.name}]`, () => {
    test('keys and endpoints made before owners keep working, as the default owner’s', {
      skip: backend.skip,
    }, async (t) => {
      const key = generateApiKey();
      const event = BEFORE.event(backend.name === 'postgres' ? 'now()' : String(Date.now()));
      const statements = [BEFORE.key(hashApiKey(key), displayPrefix(key)), BEFORE.reader, BEFORE.endpoint, event];
      const store = await OPEN[backend.name as keyof typeof OPEN](t, statements);
      const app = await buildApp({ store, webhooks: { allowPrivateUrls: true } });
      t.after(() => app.close());
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const call = (method: string, path: string, body?: unknown) => request(url, method, path, { body }, key);

      const keys = await store.apiKeys.list();
      assert.deepEqual(
        keys.map((k) => [k.name, k.owner, [...k.scopes].sort().join()]),
        [
          ['partner', 'default', 'read,webhooks,write'],
          ['reader', 'default', 'read'],
        ],
        'write gained webhooks; read alone did not',
      );
      const listed = await call('GET', '/v1/webhooks');
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        listed.json.map((e: { owner: string; url: string }) => [e.owner, e.url]),
        [['default', 'https://hooks.example.com/in']],
      );
      const id = listed.json[0].id as number;
      assert.equal((await call('POST', `/v1/webhooks/${id}/rotate-secret`)).status, 200);
      assert.equal((await call('PATCH', `/v1/webhooks/${id}`, { description: 'still mine' })).status, 200);
      const disabled = await call('GET', '/v1/events?type=webhook_endpoint.disabled');
      assert.equal(disabled.status, 200, disabled.text);
      assert.equal(disabled.json.length, 1, 'the default owner’s key sees the event of its endpoint');
      assert.equal(disabled.json[0].data.owner, 'default');
      assert.equal((await call('POST', '/v1/pets', { name: 'Rex', categoryId: 1 })).status, 201);
      // Another owner's key does not see the upgraded endpoint, nor its events.
      const stranger = (await issueApiKey(store, () => new Date(), { name: 'stranger', scopes: ['read', 'webhooks'] }))
        .key;
      expectError(await request(url, 'GET', `/v1/webhooks/${id}`, {}, stranger), 404, 'not_found');
      const strangerEvents = await request(url, 'GET', '/v1/events?type=webhook_endpoint.disabled', {}, stranger);
      assert.deepEqual(strangerEvents.json, []);
    });
  });
}
