import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { request } from '../helpers/calls.js';
import { BACKENDS } from '../helpers/stores.js';
import { OPEN_BEFORE } from '../helpers/upgrade.js';

/**
 * Upgrading to ordered deliveries (issue 47): an endpoint registered by the release before, and an event
 * about it that release recorded (its data without `ordering`), opened by this build. Both show the default
 * ordering, `subject`, as the migration gave the endpoint, and the endpoint's ordering can be changed.
 */

/** What the ordering's migration, and no earlier one, does. */
const ORDERING_MIGRATION = 'ALTER TABLE webhook_endpoints ADD COLUMN ordering';

/** The rows the release before would have written, in its columns, with each backend's booleans and times. */
const BEFORE = {
  sqlite: [
    `INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at)
      VALUES ('https://hooks.example.com/in', 'pet.created', 1, 'whsec_c2VjcmV0', 0)`,
    // Recorded now: retention would remove an older one at start.
    `INSERT INTO events (type, at, data) VALUES ('webhook_endpoint.disabled', ${Date.now()}, ${eventData(0)})`,
  ],
  postgres: [
    `INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at)
      VALUES ('https://hooks.example.com/in', 'pet.created', true, 'whsec_c2VjcmV0', to_timestamp(0))`,
    `INSERT INTO events (type, at, data) VALUES ('webhook_endpoint.disabled', now(), ${eventData('"1970-01-01T00:00:00Z"')})`,
  ],
};

/** The endpoint's row as the release before kept it in an event: every column it had but the secrets. */
function eventData(epoch: string | number): string {
  return `'{"id": 1, "owner": "default", "url": "https://hooks.example.com/in", "events": "pet.created",
    "description": null, "enabled": false, "created_at": ${epoch}, "disabled_reason": "gone",
    "disabled_at": ${epoch}, "paused_until": null, "previous_secret_expires_at": null}'`;
}

for (const backend of BACKENDS) {
  describe(`upgrading to ordered deliveries [${backend.name}]`, () => {
    test('an endpoint, and an event about it, from before show ordering "subject"; it can be changed', {
      skip: backend.skip,
    }, async (t) => {
      const store = await OPEN_BEFORE[backend.name](t, ORDERING_MIGRATION, BEFORE[backend.name]);
      const app = await buildApp({ store, webhooks: { allowPrivateUrls: true } });
      t.after(() => app.close());
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const { key } = await issueApiKey(store, () => new Date(), {
        name: 'partner',
        owner: 'default',
        scopes: ['read', 'webhooks'],
      });
      const call = (method: string, path: string, body?: unknown) => request(url, method, path, { body }, key);

      const listed = await call('GET', '/v1/webhooks');
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        listed.json.map((endpoint: { id: number; ordering: string }) => [endpoint.id, endpoint.ordering]),
        [[1, 'subject']],
      );
      const events = await call('GET', '/v1/events?type=webhook_endpoint.disabled');
      assert.equal(events.status, 200, events.text);
      assert.deepEqual(
        events.json.map((event: { data: { id: number; ordering: string } }) => [event.data.id, event.data.ordering]),
        [[1, 'subject']],
      );
      const changed = await call('PATCH', '/v1/webhooks/1', { ordering: 'none' });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.json.ordering, 'none');
      assert.equal((await call('GET', '/v1/webhooks/1')).json.ordering, 'none');
    });
  });
}
