import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import type { AttemptOutcome, AttemptQuery, DueDelivery } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { claimEverything } from '../helpers/claims.js';
import { eachBackend } from '../helpers/harness.js';

const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';

function outcome(delivery: DueDelivery, status: AttemptOutcome['status']): AttemptOutcome {
  const retry = status === 'pending' ? new Date(Date.now() - 1000) : undefined;
  const failed = status !== 'succeeded';
  return {
    delivery,
    status,
    responseStatus: failed ? 500 : 204,
    error: failed ? 'answered 500' : undefined,
    attemptedAt: new Date(),
    nextAttemptAt: retry,
  };
}

async function endpoint(store: Store, events: readonly string[] = EVENT_TYPES) {
  const createdAt = new Date();
  const url = 'https://hooks.example.com/in';
  return store.webhooks.create({ url, events: events as never, description: null, secret: SECRET, createdAt });
}

const pets = async (store: Store, count: number) => {
  for (let i = 0; i < count; i++) await store.pets.create({ name: `p${i}`, categoryId: 1, status: 'available' });
};

/** Claims every due delivery and finishes each with the status given for its event's place (0-based). */
async function attempt(store: Store, status: (index: number) => AttemptOutcome['status']) {
  const claimed = await claimEverything(store);
  for (const [i, delivery] of claimed.entries()) assert.ok(await store.deliveries.finish(outcome(delivery, status(i))));
  return claimed.map((delivery) => delivery.event.seq);
}

eachBackend((backend) => {
  describe(`redelivery store contract [${backend.name}]`, () => {
    async function fresh(t: TestContext) {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      return fixture.store;
    }

    test('the log filters by status, by event or both, newest first, each entry with its trigger', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await pets(store, 3);
      const [first, second, third] = await attempt(
        store,
        (i) => (['succeeded', 'pending', 'failed'] as const)[i] ?? 'failed',
      );
      assert.deepEqual(await attempt(store, () => 'succeeded'), [second], 'the retry');
      const log = async (query: Omit<AttemptQuery, 'limit'>, limit = 10) =>
        (await store.webhooks.attempts(id, { limit, ...query })).map((entry) => [
          entry.eventSeq,
          entry.attempt,
          entry.status,
          entry.trigger,
        ]);
      assert.deepEqual(await log({ status: 'succeeded' }), [
        [second, 2, 'succeeded', 'event'],
        [first, 1, 'succeeded', 'event'],
      ]);
      assert.deepEqual(await log({ status: 'failed' }), [[third, 1, 'failed', 'event']]);
      assert.deepEqual(await log({ eventSeq: second }), [
        [second, 2, 'succeeded', 'event'],
        [second, 1, 'pending', 'event'],
      ]);
      assert.deepEqual(await log({ eventSeq: second, status: 'pending' }), [[second, 1, 'pending', 'event']]);
      assert.deepEqual(await log({ eventSeq: second, status: 'failed' }), []);
      assert.deepEqual(await log({ eventSeq: 999_999 }), []);
      const [newest] = await store.webhooks.attempts(id, { limit: 1, status: 'succeeded' });
      assert.deepEqual(await log({ status: 'succeeded', beforeId: newest?.id }), [[first, 1, 'succeeded', 'event']]);
      assert.equal((await log({})).length, 4);
    });
  });
});
