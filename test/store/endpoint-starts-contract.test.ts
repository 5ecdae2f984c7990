import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import { COUNTED_WINDOW_MS } from '../../src/domain/start-window.js';
import type { Store } from '../../src/store/store.js';
import { claimQuery } from '../helpers/claims.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { eachBackend } from '../helpers/stores.js';

const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';

async function endpoint(store: Store, rateLimit: number | null = 5) {
  const fields = { events: [...EVENT_TYPES], description: null, secret: SECRET, createdAt: new Date() };
  return addEndpoint(store, { ...fields, url: 'https://hooks.example.com/in', rateLimit });
}

/** A time after every event these tests record (PostgreSQL stamps events with its own clock). */
const later = (ms = 0) => new Date(Date.now() + 1000 + ms);

eachBackend((backend) => {
  describe(`endpoint starts contract [${backend.name}]`, () => {
    async function fresh(t: TestContext) {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      return fixture.store;
    }

    test('take: at most the limit in a window, each refused start told when one is free', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store, 3);
      const other = await endpoint(store, 2);
      const before = Date.now();
      const first = await store.endpointStarts.take(id, 3, 7);
      assert.equal(first.granted, 3);
      assert.ok(first.at >= before && first.at <= Date.now(), 'logged at the time it was taken');
      const [one, two] = [first.at + COUNTED_WINDOW_MS, first.at + 2 * COUNTED_WINDOW_MS];
      assert.deepEqual(first.retryAt, [one, one, one, two], 'three free a window later, the fourth two');
      const again = await store.endpointStarts.take(id, 3, 1);
      assert.equal(again.granted, 0, 'the window is full');
      assert.deepEqual(again.retryAt, [first.at + COUNTED_WINDOW_MS]);
      assert.equal((await store.endpointStarts.take(other.id, 2, 2)).granted, 2, 'each endpoint has its own');
      await sleep(Math.max(0, first.at + COUNTED_WINDOW_MS + 20 - Date.now()));
      assert.equal((await store.endpointStarts.take(id, 3, 5)).granted, 3, 'a window later, the limit again');
    });

    test('take: concurrent takes of one endpoint grant the limit once, in all', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store, 5);
      const grants = await Promise.all(Array.from({ length: 12 }, () => store.endpointStarts.take(id, 5, 1)));
      assert.equal(
        grants.reduce((sum, grant) => sum + grant.granted, 0),
        5,
      );
      const logged = grants.filter((grant) => grant.granted > 0).map((grant) => grant.at);
      assert.ok(Math.max(...logged) - Math.min(...logged) < COUNTED_WINDOW_MS, 'all of them in one window');
    });

    test('holdBack: a claimed delivery is due again at its time, unattempted, its claim ended', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await store.pets.create({ name: 'held', categoryId: 1, status: 'available' });
      const now = later();
      const [delivery] = await store.deliveries.claim(claimQuery(now));
      assert.ok(delivery !== undefined);
      assert.equal(delivery.endpoint.rateLimit, 5, 'the claim says its endpoint is limited');
      const until = new Date(now.getTime() + 5000);
      await store.endpointStarts.holdBack([{ delivery, until }]);
      assert.deepEqual(await store.deliveries.claim(claimQuery(new Date(until.getTime() - 1))), [], 'not before');
      const [again] = await store.deliveries.claim(claimQuery(until));
      assert.equal(again?.id, delivery.id, 'due at its time, though the first claim would still hold');
      assert.equal(again?.attempt, 1, 'no attempt counted');
      assert.deepEqual(await store.webhooks.attempts(id, { limit: 10 }), [], 'none logged');
      // A hold-back with a claim that is no longer the caller's changes nothing.
      await store.endpointStarts.holdBack([{ delivery, until }]);
      assert.deepEqual(await store.deliveries.claim(claimQuery(new Date(until.getTime() + 10))), [], 'still claimed');
      await store.endpointStarts.holdBack([]);
    });

    test("removing an endpoint removes its starts; a limit's starts are the endpoint's own", async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store, 1);
      assert.equal((await store.endpointStarts.take(id, 1, 1)).granted, 1);
      assert.equal(await store.webhooks.remove(id, CLI_AUDIT), true);
      const next = await endpoint(store, 1);
      assert.notEqual(next.id, id);
      assert.equal((await store.endpointStarts.take(next.id, 1, 1)).granted, 1);
    });
  });
});
