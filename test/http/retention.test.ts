import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitUntil } from '../../dev/eventually.js';
import { eachBackend, startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';

const DAY_MS = 24 * 60 * 60 * 1000;

eachBackend((backend) => {
  describe(`retention [${backend.name}]`, () => {
    test('an app built by buildApp purges once ready: events past retention, expired idempotency records', async (t) => {
      let now = new Date();
      const h = await startHarness(t, backend, { clock: () => now });
      const created = await h.call('POST', '/v1/pets', {
        body: { name: 'Rex', categoryId: 1 },
        headers: { 'idempotency-key': 'once' },
      });
      assert.equal(created.status, 201);
      await settledFeed((path) => h.call('GET', path), 1);
      const idempotencyRecords = async () => Number((await h.sql('SELECT count(*) AS n FROM idempotency_keys'))[0]?.n);
      assert.equal(await idempotencyRecords(), 1);
      // 31 days on, the event is past the 30 days kept and the record past its 24 hours.
      now = new Date(now.getTime() + 31 * DAY_MS);
      const later = await h.startInstance();
      await waitUntil('the events past retention and the expired record are purged', async () => {
        const feed = await later.call('GET', '/v1/events');
        return feed.status === 200 && feed.json.length === 0 && (await idempotencyRecords()) === 0;
      });
      assert.equal((await later.call('GET', `/v1/pets/${created.json.id}`)).status, 200, 'the pet stays');
    });
  });
});
