import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import type { AttemptOutcome, AttemptQuery, DueDelivery } from '../../src/store/records.js';
import type { RecoverQuery } from '../../src/store/redelivery-records.js';
import type { Store } from '../../src/store/store.js';
import { claimEverything } from '../helpers/claims.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { eachBackend } from '../helpers/stores.js';

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
    pausedUntil: undefined,
    gone: false,
    disableIfFailingSince: undefined,
    stopped: false,
  };
}

async function endpoint(store: Store, events: readonly string[] = EVENT_TYPES) {
  const createdAt = new Date();
  const url = 'https://hooks.example.com/in';
  return addEndpoint(store, { url, events: events as never, description: null, secret: SECRET, createdAt });
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

    test('resend: a delivery queued afresh, whatever its outcome; once while pending; refusals say which', async (t) => {
      const store = await fresh(t);
      const a = await endpoint(store, ['pet.created']);
      await pets(store, 2);
      const [first, second] = await attempt(store, (i) => (i === 0 ? 'succeeded' : 'failed'));
      assert.ok(first !== undefined && second !== undefined);
      const now = new Date(Date.now() + 1000);
      const resend = (eventSeq: number, endpointId = a.id) => store.redeliveries.resend({ endpointId, eventSeq, now });
      assert.deepEqual(await resend(first), { outcome: 'queued', enabled: true });
      assert.deepEqual(await resend(first), { outcome: 'pending', enabled: true }, 'pending already: nothing added');
      assert.deepEqual(await resend(second), { outcome: 'queued', enabled: true });
      const again = await claimEverything(store);
      assert.deepEqual(
        again.map((delivery) => [delivery.event.seq, delivery.attempt]),
        [
          [first, 1],
          [second, 1],
        ],
        'the same deliveries, from their first attempt',
      );
      assert.deepEqual(await resend(first), { outcome: 'pending', enabled: true }, 'claimed, in flight');
      for (const delivery of again) assert.ok(await store.deliveries.finish(outcome(delivery, 'succeeded')));
      const log = await store.webhooks.attempts(a.id, { limit: 10, eventSeq: first });
      assert.deepEqual(
        log.map((entry) => [entry.attempt, entry.status, entry.trigger]),
        [
          [1, 'succeeded', 'resend'],
          [1, 'succeeded', 'event'],
        ],
      );

      assert.deepEqual(await resend(999_999), { outcome: 'event_not_found' });
      assert.deepEqual(await resend(first, a.id + 100), { outcome: 'endpoint_not_found' });
      await store.orders.place({ petId: 1, quantity: 1, createdAt: new Date() });
      const feed = await store.events.list({ after: undefined, limit: 10, type: 'order.placed' });
      const placed = feed.outcome === 'page' ? feed.events[0]?.seq : undefined;
      assert.ok(placed !== undefined);
      assert.deepEqual(await resend(placed), { outcome: 'not_subscribed', type: 'order.placed' });
    });

    test('resend: an event fan-out still owes is pending; a disabled endpoint gets it once enabled', async (t) => {
      const store = await fresh(t);
      const a = await endpoint(store);
      await pets(store, 1);
      const feed = await store.events.list({ after: undefined, limit: 1 });
      const seq = feed.outcome === 'page' ? (feed.events[0]?.seq ?? 0) : 0;
      const now = new Date(Date.now() + 1000);
      assert.deepEqual(await store.redeliveries.resend({ endpointId: a.id, eventSeq: seq, now }), {
        outcome: 'pending',
        enabled: true,
      });
      assert.equal((await claimEverything(store)).length, 1, 'queued once, by fan-out');

      const b = await endpoint(store);
      await store.webhooks.update(b.id, { enabled: false }, CLI_AUDIT);
      assert.deepEqual(await store.redeliveries.resend({ endpointId: b.id, eventSeq: seq, now }), {
        outcome: 'queued',
        enabled: false,
      });
      assert.deepEqual(await claimEverything(store), [], 'a disabled endpoint waits');
      await store.webhooks.update(b.id, { enabled: true }, CLI_AUDIT);
      const sent = await claimEverything(store);
      assert.deepEqual(
        sent.map((delivery) => [delivery.endpoint.id, delivery.event.seq]),
        [[b.id, seq]],
      );
    });

    test('recover: failed deliveries of events in [since, until), oldest first, each queued once', async (t) => {
      const store = await fresh(t);
      const a = await endpoint(store);
      await pets(store, 4);
      const seqs = await attempt(store, (i) => (i === 1 ? 'succeeded' : 'failed'));
      const [first, , third, fourth] = seqs as [number, number, number, number];
      const all = { endpointId: a.id, since: new Date(Date.now() - 60_000), until: new Date(Date.now() + 60_000) };
      const none = { ...all, until: all.since };
      const queuedBy = async (query: RecoverQuery) => (await store.redeliveries.recover(query))?.queued;
      assert.deepEqual(await store.redeliveries.recover(none), { queued: 0, enabled: true });
      assert.equal(await store.redeliveries.recover({ ...all, endpointId: a.id + 100 }), undefined, 'no endpoint');
      const [once = 0, twice = 0] = await Promise.all([queuedBy(all), queuedBy(all)]);
      assert.equal(once + twice, 3, `each queued once (${once} + ${twice})`);
      assert.equal(await queuedBy(all), 0, 'pending now: nothing again');
      const again = await claimEverything(store);
      assert.deepEqual(
        again.map((delivery) => [delivery.event.seq, delivery.attempt]),
        [
          [first, 1],
          [third, 1],
          [fourth, 1],
        ],
      );
      for (const delivery of again) assert.ok(await store.deliveries.finish(outcome(delivery, 'succeeded')));
      const recovered = await store.webhooks.attempts(a.id, { limit: 10, status: 'succeeded' });
      assert.deepEqual(
        recovered.map((entry) => entry.trigger),
        ['recover', 'recover', 'recover', 'event'],
      );
      await store.webhooks.update(a.id, { enabled: false }, CLI_AUDIT);
      assert.deepEqual(await store.redeliveries.recover(none), { queued: 0, enabled: false }, 'disabled: it says so');
    });
  });
});
