import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Scope } from '../../src/domain/api-key.js';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import type { NewApiKeyRecord } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { DuplicateNameError } from '../../src/store/store-errors.js';
import { claimEverything } from '../helpers/claims.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { eachBackend, type StoreFixture } from '../helpers/stores.js';

const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';

/** An attempt answered 410 Gone: it fails, and the endpoint is disabled. */
const GONE = {
  status: 'failed',
  responseStatus: 410,
  error: undefined,
  nextAttemptAt: undefined,
  pausedUntil: undefined,
  gone: true,
  stopped: false,
  disableIfFailingSince: undefined,
} as const;

function keyRecord(name: string, overrides: Partial<NewApiKeyRecord> = {}): NewApiKeyRecord {
  return {
    name,
    owner: 'default',
    prefix: 'psk_abcdef',
    hash: `${name}-hash`.padEnd(64, '0'),
    scopes: ['read', 'write'] as Scope[],
    expiresAt: null,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    ...overrides,
  };
}

/**
 * The events recorded so far, oldest first, without what the store assigns (seq, position, time) or reads
 * from the rest (subject: its own case).
 */
async function changes(store: Store) {
  const page = await store.events.list({ after: undefined, limit: 100 });
  assert.equal(page.outcome, 'page');
  const events = page.outcome === 'page' ? page.events : [];
  const seqs = events.map((event) => event.seq);
  assert.deepEqual(
    seqs,
    [...seqs].sort((a, b) => a - b),
    'the feed lists events in the order they were recorded',
  );
  return events.map(({ seq: _seq, position: _position, at: _at, subject: _subject, ...change }) => change);
}

eachBackend((backend) => {
  describe(`store contract [${backend.name}]`, () => {
    async function fresh(t: { after: (fn: () => Promise<void>) => void }): Promise<StoreFixture> {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      return fixture;
    }

    test('pets: create assigns increasing ids and get returns what was stored', async (t) => {
      const { store } = await fresh(t);
      const a = await store.pets.create({ name: ' Rex ', categoryId: 3, status: 'available' });
      const b = await store.pets.create({ name: 'Émile 🐈', categoryId: Number.MAX_SAFE_INTEGER, status: 'sold' });
      assert.ok(a.id >= 1 && b.id > a.id);
      assert.deepEqual(await store.pets.get(a.id), {
        id: a.id,
        name: ' Rex ',
        categoryId: 3,
        status: 'available',
        version: 1,
      });
      assert.deepEqual(await store.pets.get(b.id), b);
      assert.equal(b.categoryId, Number.MAX_SAFE_INTEGER);
      assert.equal(await store.pets.get(b.id + 1), undefined);
    });

    test('pets: list pages in id order, by status, after an id', async (t) => {
      const { store } = await fresh(t);
      const statuses = ['available', 'sold', 'pending', 'sold', 'available', 'sold'] as const;
      const pets = [];
      for (const [i, status] of statuses.entries())
        pets.push(await store.pets.create({ name: `p${i}`, categoryId: 1, status }));
      assert.deepEqual(await store.pets.list({ limit: 10 }), pets);
      assert.deepEqual(await store.pets.list({ limit: 2 }), pets.slice(0, 2));
      assert.deepEqual(await store.pets.list({ limit: 10, afterId: pets[2]?.id }), pets.slice(3));
      const sold = pets.filter((pet) => pet.status === 'sold');
      assert.deepEqual(await store.pets.list({ limit: 10, status: 'sold' }), sold);
      assert.deepEqual(await store.pets.list({ limit: 1, status: 'sold', afterId: sold[0]?.id }), [sold[1]]);
      assert.deepEqual(await store.pets.list({ limit: 10, afterId: pets.at(-1)?.id }), []);
    });

    test('pets: a reader paging while two instances insert concurrently never skips or repeats a pet', async (t) => {
      const fixture = await fresh(t);
      const stores = [fixture.store, await fixture.reopen()];
      let writing = true;
      const writers = Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          for (let i = 0; i < 40; i++) {
            await stores[w % 2]?.pets.create({ name: `w${w}-${i}`, categoryId: 1, status: 'available' });
          }
        }),
      ).finally(() => {
        writing = false;
      });
      const seen: number[] = [];
      let afterId = 0;
      for (;;) {
        const finished = !writing;
        const page = await fixture.store.pets.list({ limit: 3, afterId });
        seen.push(...page.map((pet) => pet.id));
        afterId = page.at(-1)?.id ?? afterId;
        if (page.length === 0 && finished) break;
        if (page.length === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      await writers;
      const all = (await fixture.store.pets.list({ limit: 1000 })).map((pet) => pet.id);
      assert.equal(all.length, 320);
      assert.deepEqual(seen, all, 'the reader saw every pet exactly once, in order');
    });

    test('orders: place moves the pet to pending; refusals say why and write nothing', async (t) => {
      const { store } = await fresh(t);
      const createdAt = new Date('2026-05-01T10:00:00.000Z');
      const pet = await store.pets.create({ name: 'x', categoryId: 1, status: 'available' });
      const result = await store.orders.place({ petId: pet.id, quantity: 3, createdAt });
      assert.equal(result.outcome, 'placed');
      const order = result.outcome === 'placed' ? result.order : undefined;
      assert.deepEqual(order, { id: order?.id, petId: pet.id, quantity: 3, status: 'placed', createdAt });
      assert.equal((await store.pets.get(pet.id))?.status, 'pending');
      assert.deepEqual(await store.orders.place({ petId: pet.id, quantity: 1, createdAt }), {
        outcome: 'pet_not_available',
        petStatus: 'pending',
      });
      assert.deepEqual(await store.orders.place({ petId: pet.id + 100, quantity: 1, createdAt }), {
        outcome: 'pet_not_found',
      });
      assert.deepEqual(await store.orders.get(order?.id ?? 0), order);
      assert.equal((await store.orders.list({ limit: 10 })).length, 1);
      assert.deepEqual(
        await changes(store),
        [
          { type: 'pet.created', pet },
          { type: 'order.placed', order },
          { type: 'pet.status_changed', pet: { ...pet, status: 'pending', version: 2 }, previousStatus: 'available' },
        ],
        'the order, then its pet, in the transaction that placed it; the refusals recorded nothing',
      );
    });

    test('orders: status changes follow the state machine and move the pet with them', async (t) => {
      const { store } = await fresh(t);
      const createdAt = new Date();
      const pet = await store.pets.create({ name: 'x', categoryId: 1, status: 'available' });
      const placed = await store.orders.place({ petId: pet.id, quantity: 1, createdAt });
      const id = placed.outcome === 'placed' ? placed.order.id : 0;
      assert.equal((await store.orders.changeStatus(id, 'delivered')).outcome, 'refused');
      assert.equal((await store.orders.changeStatus(id, 'approved')).outcome, 'changed');
      assert.equal((await store.pets.get(pet.id))?.status, 'pending');
      const delivered = await store.orders.changeStatus(id, 'delivered');
      assert.equal(delivered.outcome === 'changed' ? delivered.order.status : undefined, 'delivered');
      assert.equal((await store.pets.get(pet.id))?.status, 'sold');
      assert.equal((await store.orders.changeStatus(id, 'cancelled')).outcome, 'refused');
      assert.equal((await store.pets.get(pet.id))?.status, 'sold');
      assert.deepEqual(await store.orders.changeStatus(id + 1, 'approved'), { outcome: 'order_not_found' });
      assert.deepEqual(
        (await store.orders.list({ limit: 10, status: 'delivered' })).map((o) => o.id),
        [id],
      );
      assert.deepEqual(await store.orders.list({ limit: 10, status: 'placed' }), []);
      assert.deepEqual(await store.orders.list({ limit: 10, afterId: id }), []);
      const order = { id, petId: pet.id, quantity: 1, createdAt };
      assert.deepEqual(
        (await changes(store)).slice(3),
        [
          { type: 'order.status_changed', order: { ...order, status: 'approved' }, previousStatus: 'placed' },
          { type: 'order.status_changed', order: { ...order, status: 'delivered' }, previousStatus: 'approved' },
          { type: 'pet.status_changed', pet: { ...pet, status: 'sold', version: 3 }, previousStatus: 'pending' },
        ],
        'approving leaves the pet pending (no pet event); each change records the order, then its pet',
      );
    });

    test('pets: update applies a merge patch, adds one to the version and records what changed', async (t) => {
      const { store } = await fresh(t);
      const pet = await store.pets.create({ name: 'Rexx', categoryId: 1, status: 'available' });
      const renamed = await store.pets.update(pet.id, { name: 'Rex', categoryId: 1 }, undefined);
      const rex = { ...pet, name: 'Rex', version: 2 };
      assert.deepEqual(renamed, { outcome: 'updated', pet: rex, previous: { name: 'Rexx' } });
      const sold = await store.pets.update(pet.id, { status: 'sold', categoryId: 4 }, [2]);
      const after = { ...rex, status: 'sold', categoryId: 4, version: 3 } as const;
      assert.deepEqual(sold, { outcome: 'updated', pet: after, previous: { status: 'available', categoryId: 1 } });
      assert.deepEqual(await store.pets.get(pet.id), after);
      assert.deepEqual(await store.pets.update(pet.id, {}, [3]), { outcome: 'updated', pet: after, previous: {} });
      assert.deepEqual(
        await store.pets.update(pet.id, { name: 'Rex', status: 'sold' }, undefined),
        { outcome: 'updated', pet: after, previous: {} },
        'fields sent with the values they have change nothing',
      );
      assert.deepEqual(await store.pets.update(pet.id, { name: 'Max' }, [2, 4]), {
        outcome: 'version_mismatch',
        version: 3,
      });
      assert.deepEqual(await store.pets.update(pet.id, { name: 'Max' }, []), {
        outcome: 'version_mismatch',
        version: 3,
      });
      assert.deepEqual(await store.pets.update(pet.id + 100, { name: 'Max' }, undefined), { outcome: 'pet_not_found' });
      assert.deepEqual(await store.pets.get(pet.id), after, 'refusals wrote nothing');
      assert.deepEqual(
        (await changes(store)).slice(1),
        [
          { type: 'pet.updated', pet: rex, previous: { name: 'Rexx' } },
          { type: 'pet.updated', pet: after, previous: { categoryId: 1, status: 'available' } },
          { type: 'pet.status_changed', pet: after, previousStatus: 'available' },
        ],
        'each change records pet.updated, then pet.status_changed when the status moved; no-ops record nothing',
      );
    });

    test('pets: an order holding a pet keeps its status and the pet; done, it lets go', async (t) => {
      const { store } = await fresh(t);
      const createdAt = new Date();
      const pet = await store.pets.create({ name: 'x', categoryId: 1, status: 'available' });
      const placed = await store.orders.place({ petId: pet.id, quantity: 1, createdAt });
      const orderId = placed.outcome === 'placed' ? placed.order.id : 0;
      const held = { outcome: 'held', order: { id: orderId, status: 'placed' } };
      assert.deepEqual(await store.pets.update(pet.id, { status: 'sold' }, undefined), held);
      assert.deepEqual(await store.pets.remove(pet.id, undefined), held);
      const renamed = await store.pets.update(pet.id, { name: 'y', status: 'pending' }, [2]);
      assert.equal(renamed.outcome, 'updated', 'other fields change while held; the status sent as it is');
      await store.orders.changeStatus(orderId, 'approved');
      assert.deepEqual(await store.pets.remove(pet.id, undefined), {
        outcome: 'held',
        order: { id: orderId, status: 'approved' },
      });
      await store.orders.changeStatus(orderId, 'cancelled');
      const free = await store.pets.update(pet.id, { status: 'sold' }, [4]);
      assert.equal(free.outcome === 'updated' ? free.pet.status : free.outcome, 'sold');
    });

    test('pets: remove deletes the pet from every read and records it as it was; its orders stay', async (t) => {
      const { store } = await fresh(t);
      const createdAt = new Date();
      const [a, b] = [
        await store.pets.create({ name: 'a', categoryId: 1, status: 'available' }),
        await store.pets.create({ name: 'b', categoryId: 1, status: 'available' }),
      ];
      if (a === undefined || b === undefined) throw new Error('unreachable');
      const placed = await store.orders.place({ petId: a.id, quantity: 1, createdAt });
      const orderId = placed.outcome === 'placed' ? placed.order.id : 0;
      await store.orders.changeStatus(orderId, 'cancelled');
      const pet = await store.pets.get(a.id);
      assert.deepEqual(await store.pets.remove(a.id, [1]), { outcome: 'version_mismatch', version: 3 });
      assert.deepEqual(await store.pets.remove(a.id, [3]), { outcome: 'removed', pet });
      assert.equal(await store.pets.get(a.id), undefined);
      assert.deepEqual(await store.pets.list({ limit: 10 }), [b]);
      assert.deepEqual(await store.pets.list({ limit: 10, status: 'available' }), [b]);
      assert.equal((await store.orders.get(orderId))?.petId, a.id, 'its orders keep their petId');
      assert.deepEqual(await store.pets.remove(a.id, undefined), { outcome: 'pet_not_found' });
      assert.deepEqual(await store.pets.update(a.id, { name: 'z' }, undefined), { outcome: 'pet_not_found' });
      assert.deepEqual(await store.orders.place({ petId: a.id, quantity: 1, createdAt }), { outcome: 'pet_not_found' });
      assert.deepEqual((await changes(store)).at(-1), { type: 'pet.deleted', pet });
    });

    test('pets: of 30 concurrent updates expecting one version on two instances, exactly one applies', async (t) => {
      const fixture = await fresh(t);
      const stores = [fixture.store, await fixture.reopen()];
      const pet = await fixture.store.pets.create({ name: 'x', categoryId: 1, status: 'available' });
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => stores[i % 2]?.pets.update(pet.id, { name: `n${i}` }, [1])),
      );
      const outcomes = results.map((result) => result?.outcome);
      assert.equal(outcomes.filter((outcome) => outcome === 'updated').length, 1);
      assert.equal(outcomes.filter((outcome) => outcome === 'version_mismatch').length, 29);
      const updated = (await changes(fixture.store)).filter((change) => change.type === 'pet.updated');
      assert.equal(updated.length, 1);
      assert.equal((await fixture.store.pets.get(pet.id))?.version, 2);
    });

    test('pets: a removal and an order placed at once: one wins, and the events agree with the data', async (t) => {
      const fixture = await fresh(t);
      const stores = [fixture.store, await fixture.reopen()];
      for (let round = 0; round < 10; round++) {
        const pet = await fixture.store.pets.create({ name: `r${round}`, categoryId: 1, status: 'available' });
        const [removed, placed] = await Promise.all([
          stores[round % 2]?.pets.remove(pet.id, undefined),
          stores[(round + 1) % 2]?.orders.place({ petId: pet.id, quantity: 1, createdAt: new Date() }),
        ]);
        const won = [removed?.outcome === 'removed', placed?.outcome === 'placed'];
        assert.equal(won.filter(Boolean).length, 1, `round ${round}: ${removed?.outcome}, ${placed?.outcome}`);
        const types = (await changes(fixture.store))
          .filter((change) => 'pet' in change && change.pet.id === pet.id)
          .map((change) => change.type);
        assert.deepEqual(types, won[0] ? ['pet.created', 'pet.deleted'] : ['pet.created', 'pet.status_changed']);
        assert.equal((await fixture.store.pets.get(pet.id)) === undefined, won[0]);
      }
    });

    test("events: each is about its type's prefix and its data's id, in the feed and a claim alike", async (t) => {
      const { store } = await fresh(t);
      const fields = { events: [...EVENT_TYPES], description: null, secret: SECRET, createdAt: new Date() };
      const endpoint = await addEndpoint(store, { ...fields, url: 'https://a.example.com/' });
      const pet = await store.pets.create({ name: 'a', categoryId: 1, status: 'available' });
      await store.pets.update(pet.id, { name: 'b' }, undefined);
      const placed = await store.orders.place({ petId: pet.id, quantity: 1, createdAt: new Date() });
      const orderId = placed.outcome === 'placed' ? placed.order.id : 0;
      await store.orders.changeStatus(orderId, 'approved');
      await store.pets.remove((await store.pets.create({ name: 'c', categoryId: 1, status: 'sold' })).id, undefined);
      const [first, ...claimed] = await claimEverything(store);
      assert.ok(first);
      await store.deliveries.finish({ ...GONE, delivery: first, attemptedAt: new Date() });
      const page = await store.events.list({ after: undefined, limit: 100 });
      const events = page.outcome === 'page' ? page.events : [];
      assert.deepEqual(
        events.map((event) => [event.type, event.subject]),
        [
          ['pet.created', `pet/${pet.id}`],
          ['pet.updated', `pet/${pet.id}`],
          ['order.placed', `order/${orderId}`],
          ['pet.status_changed', `pet/${pet.id}`],
          ['order.status_changed', `order/${orderId}`],
          ['pet.created', `pet/${pet.id + 1}`],
          ['pet.deleted', `pet/${pet.id + 1}`],
          ['webhook_endpoint.disabled', `webhook_endpoint/${endpoint.id}`],
        ],
      );
      const bySeq = new Map(events.map((event) => [event.seq, event.subject]));
      for (const { event } of [first, ...claimed]) {
        assert.equal('subject' in event && event.subject, bySeq.get(event.seq), `a claim reads evt_${event.seq}'s`);
      }

      const tested = await addEndpoint(store, { ...fields, url: 'https://b.example.com/' });
      await store.redeliveries.sendTest({ endpointId: tested.id, now: new Date() });
      const sent = (await claimEverything(store)).map((delivery) => delivery.event);
      assert.deepEqual(
        sent.map((event) => [event.type, 'subject' in event]),
        [['webhook.test', false]],
        'a test send is about nothing',
      );
    });

    test('events: get reads one event of the feed by seq, as its owner sees it; none past retention', async (t) => {
      const { store } = await fresh(t);
      const fields = { events: ['pet.created'] as const, description: null, secret: SECRET, createdAt: new Date() };
      const acme = await addEndpoint(store, { ...fields, url: 'https://hooks.example.com/in', owner: 'acme' });
      await store.pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
      const [delivery] = await claimEverything(store);
      assert.ok(delivery);
      const finished = { delivery, attemptedAt: new Date(), nextAttemptAt: undefined, pausedUntil: undefined };
      const recorded = await store.deliveries.finish({ ...finished, ...GONE, error: 'answered 410' });
      assert.equal(recorded, 'gone', 'the 410 disabled the endpoint: a webhook_endpoint.disabled event of acme');
      const testSend = await store.redeliveries.sendTest({ endpointId: acme.id, now: new Date() });
      assert.ok(testSend);

      const page = await store.events.list({ after: undefined, limit: 10 });
      const [created, disabled] = page.outcome === 'page' ? page.events : [];
      assert.deepEqual([created?.type, disabled?.type], ['pet.created', 'webhook_endpoint.disabled']);
      assert.ok(created && disabled);
      assert.deepEqual(await store.events.get(created.seq, undefined), created, 'as the feed reads it');
      assert.deepEqual(await store.events.get(created.seq, 'globex'), created, 'an event about a pet is everyone’s');
      assert.deepEqual(await store.events.get(disabled.seq, 'acme'), disabled, 'its owner’s');
      assert.deepEqual(await store.events.get(disabled.seq, undefined), disabled, 'and every owner’s reader’s (admin)');
      assert.equal(await store.events.get(disabled.seq, 'globex'), undefined, 'another owner’s: none');
      assert.equal(await store.events.get(testSend.seq, undefined), undefined, 'a test send’s is not on the feed');
      assert.equal(await store.events.get(testSend.seq + 1000, undefined), undefined, 'never recorded');

      await store.events.purge(new Date(Date.now() + 60_000), new Date());
      assert.equal(await store.events.get(created.seq, undefined), undefined, 'removed by retention');
    });

    test('api keys: create, find by hash, list without hashes, duplicate active names refused', async (t) => {
      const { store } = await fresh(t);
      const created = await store.apiKeys.create(keyRecord('ci', { scopes: ['read'] }), CLI_AUDIT);
      assert.equal(created.name, 'ci');
      assert.deepEqual(created.scopes, ['read']);
      assert.equal(created.revokedAt, null);
      const found = await store.apiKeys.findByHash(keyRecord('ci').hash);
      assert.equal(found?.id, created.id);
      assert.equal(found?.hash, keyRecord('ci').hash);
      assert.equal(await store.apiKeys.findByHash('0'.repeat(64)), undefined);
      await assert.rejects(
        store.apiKeys.create(keyRecord('ci', { hash: 'f'.repeat(64) }), CLI_AUDIT),
        DuplicateNameError,
      );
      const listed = await store.apiKeys.list();
      assert.equal(listed.length, 1);
      assert.ok(!('hash' in (listed[0] as object)));
    });

    test('api keys: revoke by id or name; the name is free again afterwards', async (t) => {
      const { store } = await fresh(t);
      const one = await store.apiKeys.create(keyRecord('one'), CLI_AUDIT);
      await store.apiKeys.create(keyRecord('two'), CLI_AUDIT);
      const at = new Date('2026-02-01T00:00:00Z');
      assert.equal((await store.apiKeys.revoke(String(one.id), at, CLI_AUDIT))?.name, 'one');
      assert.equal((await store.apiKeys.revoke('two', at, CLI_AUDIT))?.revokedAt?.getTime(), at.getTime());
      assert.equal(await store.apiKeys.revoke('two', at, CLI_AUDIT), undefined, 'already revoked');
      assert.equal(await store.apiKeys.revoke('nobody', at, CLI_AUDIT), undefined);
      assert.equal((await store.apiKeys.findByHash(keyRecord('one').hash))?.revokedAt?.getTime(), at.getTime());
      await store.apiKeys.create(keyRecord('two', { hash: 'e'.repeat(64) }), CLI_AUDIT);
    });

    test('api keys: createFirst creates only on an empty table, once across instances', async (t) => {
      const fixture = await fresh(t);
      const other = await fixture.reopen();
      const results = await Promise.all([
        fixture.store.apiKeys.createFirst(keyRecord('first-a'), CLI_AUDIT),
        other.apiKeys.createFirst(keyRecord('first-b'), CLI_AUDIT),
      ]);
      assert.equal(results.filter((r) => r !== undefined).length, 1);
      assert.equal(await fixture.store.apiKeys.createFirst(keyRecord('first-c'), CLI_AUDIT), undefined);
      assert.equal((await fixture.store.apiKeys.list()).length, 1);
    });

    test('api keys: touch records the last-used time; expiry is kept', async (t) => {
      const { store } = await fresh(t);
      const expiresAt = new Date('2030-01-01T00:00:00Z');
      const key = await store.apiKeys.create(keyRecord('k', { expiresAt }), CLI_AUDIT);
      assert.equal(key.expiresAt?.getTime(), expiresAt.getTime());
      const at = new Date('2026-03-01T12:00:00Z');
      await store.apiKeys.touch(key.id, at);
      assert.equal((await store.apiKeys.list())[0]?.lastUsedAt?.getTime(), at.getTime());
    });

    test('secrets are created once and shared by every instance', async (t) => {
      const fixture = await fresh(t);
      const first = await fixture.store.secret('cursor');
      assert.equal(first.length, 32);
      assert.deepEqual(await fixture.store.secret('cursor'), first);
      assert.deepEqual(await (await fixture.reopen()).secret('cursor'), first);
      assert.notDeepEqual(await fixture.store.secret('other'), first);
    });

    test('ping answers while open; a second open of the same database migrates nothing and sees the data', async (t) => {
      const fixture = await fresh(t);
      await fixture.store.ping();
      const pet = await fixture.store.pets.create({ name: 'x', categoryId: 1, status: 'pending' });
      const other = await fixture.reopen();
      assert.deepEqual(await other.pets.get(pet.id), pet);
    });
  });
});
