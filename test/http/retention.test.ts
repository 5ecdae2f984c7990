import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { waitUntil } from '../../dev/eventually.js';
import { buildApp } from '../../src/app.js';
import { EXPIRED_DELIVERY_ERROR } from '../../src/domain/delivery-status.js';
import { loggerOptions } from '../../src/process/log-stream.js';
import { startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { eachBackend } from '../helpers/stores.js';
import { createEndpoint, testLookup } from '../helpers/webhooks.js';

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

    test('a delivery still pending when its event goes is marked failed in the log, warned of and counted', async (t) => {
      let now = new Date();
      const clock = () => now;
      const h = await startHarness(t, backend, { clock, webhooks: { allowPrivateUrls: false, lookup: testLookup } });
      const hook = await createEndpoint(h, { events: ['pet.created'] });
      await h.createPets(1);
      const [event] = await settledFeed((path) => h.call('GET', path), 1);
      // Paused, as for maintenance, before any instance sent it (none sends here): its delivery waits, pending,
      // for longer than the event is kept.
      assert.equal((await h.call('PATCH', `/v1/webhooks/${hook.id}`, { body: { enabled: false } })).status, 200);
      now = new Date(now.getTime() + 31 * DAY_MS);

      const lines: string[] = [];
      const stream = new Writable({
        write(chunk, _encoding, done) {
          lines.push(...String(chunk).split('\n').filter(Boolean));
          done();
        },
      });
      const later = await buildApp({ store: h.store, clock, logger: { ...loggerOptions('warn'), stream } });
      t.after(() => later.close());
      await later.ready();
      const warning = () => lines.map((line) => JSON.parse(line)).find((entry) => entry.expired !== undefined);
      await waitUntil('the purge warns of the expired delivery', async () => warning() !== undefined);
      assert.equal(warning().level, 40, 'warn');
      assert.equal(warning().expired, 1);
      assert.match(warning().msg, /EVENT_RETENTION_DAYS: marked failed/);

      const log = await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`);
      assert.equal(log.status, 200);
      assert.deepEqual(log.json, [
        {
          eventId: event.id,
          type: 'pet.created',
          attempt: 1,
          status: 'failed',
          error: EXPIRED_DELIVERY_ERROR,
          attemptedAt: now.toISOString(),
          trigger: 'event',
        },
      ]);
      const scrape = await later.inject({ method: 'GET', url: '/metrics' });
      assert.match(scrape.body, /^petstore_webhook_deliveries_total\{outcome="expired"\} 1$/m);
      assert.equal((await h.call('GET', '/v1/events')).json.length, 0, 'the event is gone');
    });
  });
});
