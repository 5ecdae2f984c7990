import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { EXPIRED_DELIVERY_ERROR, STOPPED_ATTEMPT_ERROR } from '../../src/domain/delivery-status.js';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import type { AttemptOutcome, DueDelivery } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { claimEverything, claimQuery } from '../helpers/claims.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { eachBackend } from '../helpers/stores.js';

const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';

/** A time after every event these tests record (PostgreSQL stamps events with its own clock). */
const later = (ms = 0) => new Date(Date.now() + 1000 + ms);

function outcome(delivery: DueDelivery, overrides: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    delivery,
    status: 'succeeded',
    responseStatus: 204,
    error: undefined,
    attemptedAt: new Date(),
    nextAttemptAt: undefined,
    pausedUntil: undefined,
    gone: false,
    disableIfFailingSince: undefined,
    stopped: false,
    ...overrides,
  };
}

async function endpoint(store: Store, url = 'https://hooks.example.com/in') {
  const createdAt = new Date();
  return addEndpoint(store, { url, events: [...EVENT_TYPES], description: null, secret: SECRET, createdAt });
}

const pets = async (store: Store, count: number) => {
  for (let i = 0; i < count; i++) await store.pets.create({ name: `p${i}`, categoryId: 1, status: 'available' });
};

/** Endpoints a and b, `count` pets, and a first claim (at `now`) of two deliveries of each endpoint. */
async function twoOfEach(store: Store, count: number) {
  const a = await endpoint(store, 'https://a.example.com/');
  const b = await endpoint(store, 'https://b.example.com/');
  await pets(store, count);
  const now = later();
  const first = await store.deliveries.claim(claimQuery(now, { freeOtherwise: 2 }));
  return { a, b, now, first };
}

eachBackend((backend) => {
  describe(`delivery store contract [${backend.name}]`, () => {
    async function fresh(t: TestContext) {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      return fixture.store;
    }

    test("claim: a full owner's endpoints get only their free slots; each delivery says its owner", async (t) => {
      const store = await fresh(t);
      const createdAt = new Date();
      const fields = { events: [...EVENT_TYPES], description: null, secret: SECRET, createdAt };
      const acme = await addEndpoint(store, { ...fields, url: 'https://a.example.com/', owner: 'acme' });
      const acmeKnown = await addEndpoint(store, { ...fields, url: 'https://k.example.com/', owner: 'acme' });
      const globex = await addEndpoint(store, { ...fields, url: 'https://g.example.com/', owner: 'globex' });
      await pets(store, 3);
      const free = new Map([[acmeKnown.id, 2]]);
      const claimed = await store.deliveries.claim(claimQuery(later(), { free, fullOwners: ['acme'] }));
      const taken = claimed.map((d) => [d.endpoint.id, d.endpoint.owner]);
      assert.deepEqual(
        taken.filter(([id]) => id === acme.id),
        [],
        'none of a full owner’s endpoint it has no slots for',
      );
      assert.deepEqual(
        taken.filter(([id]) => id === acmeKnown.id),
        [
          [acmeKnown.id, 'acme'],
          [acmeKnown.id, 'acme'],
        ],
        'its free slots, as given',
      );
      assert.equal(taken.filter(([id]) => id === globex.id).length, 3, 'another owner’s, as before');
      assert.ok(taken.every(([id, owner]) => owner === (id === globex.id ? 'globex' : 'acme')));
    });

    test('claim: due deliveries with what the attempt needs, once, within the bounds asked', async (t) => {
      const store = await fresh(t);
      const { a, b, now, first } = await twoOfEach(store, 5);
      assert.deepEqual(first.map((delivery) => delivery.endpoint.id).sort(), [a.id, a.id, b.id, b.id].sort());
      const one = first.find((delivery) => delivery.endpoint.id === a.id) as DueDelivery;
      const signing = { secret: SECRET, previousSecret: null };
      const fields = { id: a.id, owner: 'default', url: 'https://a.example.com/', rateLimit: null };
      assert.deepEqual(one.endpoint, { ...fields, ...signing });
      assert.equal(one.attempt, 1);
      assert.equal(one.claimedUntil.getTime(), now.getTime() + 60_000);
      assert.equal(one.event.type, 'pet.created');
      const names = first.flatMap((delivery) =>
        delivery.endpoint.id === a.id && delivery.event.type === 'pet.created' ? [delivery.event.pet.name] : [],
      );
      assert.deepEqual(names.sort(), ['p0', 'p1'], 'oldest due first');

      const free = new Map([
        [a.id, 1],
        [b.id, 2],
      ]);
      const second = await store.deliveries.claim(claimQuery(now, { free, freeOtherwise: 0 }));
      assert.deepEqual(second.map((delivery) => delivery.endpoint.id).sort(), [a.id, b.id, b.id].sort());
      const ids = [...first, ...second].map((delivery) => delivery.id);
      assert.equal(new Set(ids).size, ids.length, 'nothing claimed twice');
      assert.equal((await store.deliveries.claim(claimQuery(now, { limit: 1 }))).length, 1);
      assert.equal((await store.deliveries.claim(claimQuery(now, { limit: 0 }))).length, 0);
      assert.equal((await store.deliveries.claim(claimQuery(now))).length, 2, 'the 10 deliveries, each claimed once');
      assert.deepEqual(await store.deliveries.claim(claimQuery(later(1000))), []);
    });

    test('with 1,000 endpoints a claim queues a bounded step, not its limit of events for each, and takes turns; those it may take nothing of are not fanned out', async (t) => {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      const { store } = fixture;
      const crowd: number[] = [];
      for (let i = 0; i < 1000; i++) crowd.push((await endpoint(store, `https://hooks.example.com/${i}`)).id);
      await pets(store, 100);
      const claimed = await store.deliveries.claim(claimQuery(later(), { limit: 64, freeOtherwise: 1 }));
      assert.equal(new Set(claimed.map((delivery) => delivery.endpoint.id)).size, 64, 'one of each of 64 endpoints');
      const queued = async () => Number((await fixture.sql('SELECT count(*) AS n FROM webhook_deliveries'))[0]?.n);
      // One event for each endpoint (QUEUE_PER_STEP shared by 1,000: at least one each); it was 64 each.
      assert.equal(await queued(), 1000);
      // The crowd hangs (the dispatcher gives it no slot), and one more endpoint answers: a step is its own.
      const healthy = await endpoint(store, 'https://healthy.example.com/');
      await pets(store, 100);
      const free = new Map([...crowd.map((id): [number, number] => [id, 0]), [healthy.id, 16]]);
      const claim = () => store.deliveries.claim(claimQuery(later(), { limit: 64, free, freeOtherwise: 0 }));
      // On PostgreSQL a claim steps fan-out after one that took less than it could: the second here.
      let next = await claim();
      if (next.length === 0) next = await claim();
      assert.deepEqual(
        next.map((delivery) => delivery.endpoint.id),
        Array(16).fill(healthy.id),
        'its 16 oldest at once; sharing each step with the crowd, it got one event a step',
      );
      assert.equal(await queued(), 1000 + 100, 'nothing more queued for the crowd: its backlog waits, not queued');
    });

    test('a claim holds until its lease; then another takes it, and the late finisher records nothing', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await pets(store, 1);
      const now = later();
      const [mine] = await store.deliveries.claim(claimQuery(now, { leaseMs: 1000 }));
      assert.ok(mine);
      assert.deepEqual(await store.deliveries.claim(claimQuery(new Date(now.getTime() + 999))), []);
      const [theirs] = await store.deliveries.claim(claimQuery(new Date(now.getTime() + 1001)));
      assert.equal(theirs?.id, mine.id);
      assert.equal(theirs?.attempt, 1);
      assert.equal(await store.deliveries.finish(outcome(mine)), false, 'the lost claim records nothing');
      assert.equal(await store.deliveries.finish(outcome(theirs as DueDelivery)), true);
      assert.equal(await store.deliveries.finish(outcome(theirs as DueDelivery)), false, 'recorded once');
      const log = await store.webhooks.attempts(id, { limit: 10 });
      assert.deepEqual(
        log.map(({ attempt, status, responseStatus, error }) => ({ attempt, status, responseStatus, error })),
        [{ attempt: 1, status: 'succeeded', responseStatus: 204, error: null }],
      );
    });

    test('release: a claim given back is due again at once, unless another claim replaced it', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await pets(store, 2);
      const now = later();
      const [kept, given] = await store.deliveries.claim(claimQuery(now, { leaseMs: 1000 }));
      assert.ok(kept && given);
      await store.deliveries.release([given]);
      const [again] = await store.deliveries.claim(claimQuery(now, { leaseMs: 1000 }));
      assert.deepEqual([again?.id, again?.attempt], [given.id, 1], 'claimed again at once, its attempts unchanged');
      const [theirs] = await store.deliveries.claim(claimQuery(new Date(now.getTime() + 1001)));
      assert.ok(theirs);
      await store.deliveries.release([kept]);
      assert.deepEqual(
        await store.deliveries.claim(claimQuery(new Date(now.getTime() + 1002))),
        [],
        'a stale claim gives back nothing',
      );
      assert.equal(await store.deliveries.finish(outcome(theirs)), true);
      assert.equal((await store.webhooks.attempts(id, { limit: 10 })).length, 1, 'a release logs no attempt');
    });

    test("finish: a wait asked for pauses the endpoint's every delivery until then; a later success keeps it", async (t) => {
      const store = await fresh(t);
      const { a, b, now, first } = await twoOfEach(store, 3);
      const [asked, answered] = first.filter((delivery) => delivery.endpoint.id === a.id) as [DueDelivery, DueDelivery];
      const pausedUntil = new Date(now.getTime() + 10_000);
      const waits = { status: 'pending', responseStatus: 429, nextAttemptAt: pausedUntil, pausedUntil } as const;
      // Recorded together (PostgreSQL batches them): the success answered a request sent before the 429.
      const recorded = await Promise.all([
        store.deliveries.finish(outcome(asked, waits)),
        store.deliveries.finish(outcome(answered, { attemptedAt: new Date(Date.now() + 1) })),
        ...first.filter((delivery) => delivery.endpoint.id === b.id).map((d) => store.deliveries.finish(outcome(d))),
      ]);
      assert.ok(recorded.every((r) => r === true));
      const claimedAt = async (at: Date) =>
        (await store.deliveries.claim(claimQuery(at))).map((delivery) => delivery.endpoint.id);
      assert.deepEqual(await claimedAt(new Date(now.getTime() + 1)), [b.id], "the other endpoint's delivery, at once");
      assert.deepEqual(await claimedAt(new Date(pausedUntil.getTime() - 1)), [], "a's third waits with the retry");
      assert.deepEqual(await claimedAt(pausedUntil), [a.id, a.id]);
    });

    test('finish: pending waits for its next attempt, numbered on; succeeded and failed are done', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await pets(store, 2);
      const now = later();
      const [retried, done] = (await store.deliveries.claim(claimQuery(now))) as [DueDelivery, DueDelivery];
      const next = new Date(now.getTime() + 10_000);
      const failure = {
        status: 'pending',
        responseStatus: undefined,
        error: 'connection refused',
        nextAttemptAt: next,
      };
      assert.equal(await store.deliveries.finish(outcome(retried, failure as Partial<AttemptOutcome>)), true);
      assert.equal(await store.deliveries.finish(outcome(done)), true);
      assert.deepEqual(await store.deliveries.claim(claimQuery(new Date(next.getTime() - 1))), []);
      const [again] = await store.deliveries.claim(claimQuery(next));
      assert.equal(again?.id, retried.id);
      assert.equal(again?.attempt, 2);
      assert.equal(await store.deliveries.finish(outcome(again as DueDelivery, { status: 'failed' })), true);
      assert.deepEqual(await store.deliveries.claim(claimQuery(later(60_000))), []);
      const log = await store.webhooks.attempts(id, { limit: 10 });
      assert.deepEqual(
        log.map((entry) => [entry.eventSeq, entry.attempt, entry.status, entry.nextAttemptAt?.getTime() ?? null]),
        [
          [retried.event.seq, 2, 'failed', null],
          [done.event.seq, 1, 'succeeded', null],
          [retried.event.seq, 1, 'pending', next.getTime()],
        ],
      );
    });

    test('finish: an attempt a stop cut off is logged, due again under its number, and never disables', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await pets(store, 1);
      const now = later();
      const [cut] = (await store.deliveries.claim(claimQuery(now))) as [DueDelivery];
      const stopped = {
        status: 'pending',
        responseStatus: undefined,
        error: STOPPED_ATTEMPT_ERROR,
        nextAttemptAt: now,
        // Any failure recorded with this would disable the endpoint at once.
        disableIfFailingSince: later(60_000),
        stopped: true,
      } as const;
      assert.equal(await store.deliveries.finish(outcome(cut, stopped)), true, 'recorded, no endpoint disabled');
      assert.equal((await store.webhooks.get(id))?.enabled, true);
      const [again] = await store.deliveries.claim(claimQuery(now));
      assert.equal(again?.id, cut.id, 'due at once: the claim is let go as it is recorded');
      assert.equal(again?.attempt, 1, 'the same attempt, made again');
      assert.equal(await store.deliveries.finish(outcome(again as DueDelivery)), true);
      const log = await store.webhooks.attempts(id, { limit: 10 });
      assert.deepEqual(
        log.map((entry) => [entry.attempt, entry.status, entry.error, entry.nextAttemptAt?.getTime() ?? null]),
        [
          [1, 'succeeded', null, null],
          [1, 'pending', STOPPED_ATTEMPT_ERROR, now.getTime()],
        ],
      );
    });

    test('finishes that arrive together are each recorded, or not, as if alone', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await pets(store, 5);
      const now = later();
      const claimed = await store.deliveries.claim(claimQuery(now, { leaseMs: 1000 }));
      assert.equal(claimed.length, 5);
      const [lost, ...kept] = claimed as [DueDelivery, ...DueDelivery[]];
      const [again] = await store.deliveries.claim(claimQuery(new Date(now.getTime() + 1001), { limit: 1 }));
      assert.equal(again?.id, lost.id, 'the first claim ran out and was taken again');
      const retry = { status: 'pending', error: 'answered 500', responseStatus: 500, nextAttemptAt: later(60_000) };
      const results = await Promise.all([
        store.deliveries.finish(outcome(lost)),
        ...kept.map((delivery, i) =>
          store.deliveries.finish(outcome(delivery, i === 0 ? (retry as Partial<AttemptOutcome>) : {})),
        ),
      ]);
      assert.deepEqual(results, [false, true, true, true, true]);
      const log = await store.webhooks.attempts(id, { limit: 10 });
      assert.deepEqual(
        log.map((entry) => [entry.eventSeq, entry.status, entry.responseStatus]).reverse(),
        kept.map((delivery, i) => [delivery.event.seq, i === 0 ? 'pending' : 'succeeded', i === 0 ? 500 : 204]),
        'logged in the order finished, the lost claim not at all',
      );
      assert.equal(await store.deliveries.finish(outcome(again as DueDelivery)), true);
    });

    test("finish: the answer's duration and body are kept with the attempt, alone or together", async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      await pets(store, 4);
      const [alone, ...together] = (await store.deliveries.claim(claimQuery(later()))) as [
        DueDelivery,
        ...DueDelivery[],
      ];
      const kept = 'é'.repeat(2048);
      const answers: Partial<AttemptOutcome>[] = [
        { status: 'failed', responseStatus: 500, durationMs: 153, responseBody: kept, responseBodyTruncated: true },
        { durationMs: 7, responseBody: '{"ok":true}', responseBodyTruncated: false },
        { status: 'failed', responseStatus: undefined, error: 'connection refused', durationMs: 0 },
        // An outcome without them (as from before they were kept): nothing is stored.
        {},
      ];
      assert.equal(await store.deliveries.finish(outcome(alone, answers[0])), true);
      const results = await Promise.all(
        together.map((delivery, i) => store.deliveries.finish(outcome(delivery, answers[i + 1]))),
      );
      assert.deepEqual(results, [true, true, true]);
      const log = await store.webhooks.attempts(id, { limit: 10 });
      assert.deepEqual(
        log.map((entry) => [entry.durationMs, entry.responseBody, entry.responseBodyTruncated]).reverse(),
        [
          [153, kept, true],
          [7, '{"ok":true}', false],
          [0, null, false],
          [null, null, false],
        ],
      );
    });

    test('purge: a delivery still pending when its event goes ends failed in a log that outlives it', async (t) => {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      const { store } = fixture;
      const retried = await endpoint(store, 'https://retried.example.com/');
      const paused = await endpoint(store, 'https://paused.example.com/');
      await pets(store, 1);
      // Disabled before any claim: its delivery of the first event is queued and waits, never attempted.
      await store.webhooks.update(paused.id, { enabled: false }, CLI_AUDIT);
      const now = later();
      const claimed = await store.deliveries.claim(claimQuery(now));
      assert.equal(claimed.length, 1);
      const retryAt = new Date(now.getTime() + 3_600_000);
      // Made after the line the purge below draws (the claim's time is ahead of the clock): it stays.
      const failure = {
        status: 'pending',
        responseStatus: 503,
        error: 'answered 503',
        attemptedAt: now,
        nextAttemptAt: retryAt,
      };
      assert.equal(
        await store.deliveries.finish(outcome(claimed[0] as DueDelivery, failure as Partial<AttemptOutcome>)),
        true,
      );
      // Owed to the enabled endpoint but not queued yet: no claim has fanned it out.
      await pets(store, 1);
      await sleep(50);
      const before = new Date();
      await sleep(50);
      await pets(store, 1);

      const feed = await store.events.list({ after: undefined, limit: 10 });
      const [first, second, third] = feed.outcome === 'page' ? feed.events.map((event) => event.seq) : [];

      const purgedAt = later(5000);
      assert.deepEqual(await store.events.purge(before, purgedAt), { events: 2, expired: 3 });
      const log = async (id: number) =>
        (await store.webhooks.attempts(id, { limit: 10 })).map((entry) => [
          entry.eventSeq,
          entry.attempt,
          entry.status,
          entry.error,
          entry.attemptedAt.getTime() === purgedAt.getTime() ? 'at the purge' : 'earlier',
        ]);
      assert.deepEqual(await log(retried.id), [
        [second, 1, 'failed', EXPIRED_DELIVERY_ERROR, 'at the purge'],
        [first, 2, 'failed', EXPIRED_DELIVERY_ERROR, 'at the purge'],
        [first, 1, 'pending', 'answered 503', 'earlier'],
      ]);
      assert.deepEqual(await log(paused.id), [[first, 1, 'failed', EXPIRED_DELIVERY_ERROR, 'at the purge']]);
      const expired = (await store.webhooks.attempts(paused.id, { limit: 10 }))[0];
      assert.deepEqual([expired?.durationMs, expired?.responseBody], [null, null], 'an expiry is no attempt');
      assert.deepEqual(await fixture.sql('SELECT id FROM webhook_deliveries'), [], 'nothing of them is left to send');
      assert.equal(await store.deliveries.finish(outcome(claimed[0] as DueDelivery)), false);
      const newer = await claimEverything(store);
      assert.deepEqual(
        newer.map((delivery) => [delivery.endpoint.id, delivery.event.seq]),
        [[retried.id, third]],
        'the newer event is untouched',
      );
      assert.equal(await store.deliveries.finish(outcome(newer[0] as DueDelivery)), true);

      // The log keeps an entry for the retention from when it was made: the expired ones outlive the rest.
      assert.deepEqual(await store.events.purge(purgedAt, purgedAt), { events: 1, expired: 0 });
      assert.equal((await log(retried.id)).length, 2);
      assert.equal((await log(paused.id)).length, 1);
      assert.deepEqual(await store.events.purge(later(10_000), later(10_000)), { events: 0, expired: 0 });
      assert.deepEqual([await log(retried.id), await log(paused.id)], [[], []]);
    });

    test('stats count pending deliveries to enabled endpoints; a disabled one keeps its own, unclaimed', async (t) => {
      const store = await fresh(t);
      const { id } = await endpoint(store);
      assert.deepEqual(await store.deliveries.stats(new Date()), { pending: 0, oldestPendingSeconds: 0 });
      await pets(store, 3);
      const stats = await store.deliveries.stats(later(5000));
      assert.equal(stats.pending, 3);
      assert.ok(stats.oldestPendingSeconds >= 5 && stats.oldestPendingSeconds < 10, `${stats.oldestPendingSeconds}`);
      await store.webhooks.update(id, { enabled: false }, CLI_AUDIT);
      assert.deepEqual(await store.deliveries.claim(claimQuery(later())), []);
      assert.deepEqual(await store.deliveries.stats(later()), { pending: 0, oldestPendingSeconds: 0 });
      await store.webhooks.update(id, { enabled: true }, CLI_AUDIT);
      assert.equal((await store.deliveries.claim(claimQuery(later()))).length, 3);
    });

    test("ordered by subject: a claim takes a subject's first pending event, till it is done for good", async (t) => {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      const { store } = fixture;
      const ordered = await endpoint(store, 'https://a.example.com/');
      const unordered = await endpoint(store, 'https://b.example.com/');
      await fixture.sql(`UPDATE webhook_endpoints SET ordering = 'none' WHERE id = ${unordered.id}`);
      const rex = await store.pets.create({ name: 'rex', categoryId: 1, status: 'available' });
      await store.pets.update(rex.id, { name: 'rex 2' }, undefined);
      await store.pets.update(rex.id, { name: 'rex 3' }, undefined);
      await pets(store, 1);
      const seqsOf = (claimed: DueDelivery[], id: number) =>
        claimed.filter((d) => d.endpoint.id === id).map((d) => d.event.seq);

      const first = await store.deliveries.claim(claimQuery(later()));
      const [created, , , other] = seqsOf(first, unordered.id);
      assert.equal(seqsOf(first, unordered.id).length, 4, 'unordered: every event at once');
      assert.deepEqual(seqsOf(first, ordered.id), [created, other], "ordered: each subject's first");
      const log = await store.webhooks.attempts(ordered.id, { limit: 10 });
      assert.deepEqual(
        log.map((entry) => [entry.eventSeq, entry.status, entry.waitingFor]),
        [
          [(created as number) + 2, 'pending', (created as number) + 1],
          [(created as number) + 1, 'pending', created],
        ],
        'each waiting one logged once, naming the one before it',
      );
      assert.deepEqual(await store.deliveries.claim(claimQuery(later())), [], 'nothing more while the first is out');

      // The first fails and will be retried: the next still waits; resending a waiting one adds nothing.
      const delivery = first.find((d) => d.endpoint.id === ordered.id && d.event.seq === created) as DueDelivery;
      for (const done of first.filter((d) => d !== delivery)) await store.deliveries.finish(outcome(done));
      await store.deliveries.finish(outcome(delivery, { status: 'pending', nextAttemptAt: later(60_000) }));
      const third = (created as number) + 2;
      assert.deepEqual(
        await store.redeliveries.resend({ endpointId: ordered.id, eventSeq: third, now: later() }),
        { outcome: 'pending', enabled: true },
        'pending already (waiting): nothing added',
      );
      assert.deepEqual(await store.deliveries.claim(claimQuery(later())), [], 'the retry is not due yet');

      // Failed for good: the second goes, then the third.
      const retried = await store.deliveries.claim(claimQuery(later(61_000)));
      assert.deepEqual(seqsOf(retried, ordered.id), [created]);
      await store.deliveries.finish(outcome(retried[0] as DueDelivery, { status: 'failed' }));
      const second = await store.deliveries.claim(claimQuery(later(61_000)));
      assert.deepEqual(seqsOf(second, ordered.id), [(created as number) + 1]);
      await store.deliveries.finish(outcome(second[0] as DueDelivery));
      assert.deepEqual(seqsOf(await store.deliveries.claim(claimQuery(later(61_000))), ordered.id), [third]);
    });
  });
});
