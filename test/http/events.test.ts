import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError } from '../helpers/calls.js';
import { recordEveryType, SENDS_LOCALLY } from '../helpers/every-event-type.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { eachBackend } from '../helpers/stores.js';

/** The cursor of a response's `Link: rel="next"`, which the feed always sends. */
function nextCursor(result: { headers: Headers }): string {
  const link = result.headers.get('link') ?? '';
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  assert.ok(match, `Link: ${link}`);
  const cursor = new URL(match[1] as string, 'http://x').searchParams.get('cursor');
  assert.ok(cursor);
  return cursor;
}

/** The harness's GET, for settledFeed. */
const get = (h: Harness) => (path: string) => h.call('GET', path);

async function feed(h: Harness, query = ''): Promise<any[]> {
  const result = await h.call('GET', `/v1/events${query}`);
  assert.equal(result.status, 200, result.text);
  return result.json;
}

/** Reads the whole feed from a cursor (or the start), page by page; returns the events and the last cursor. */
async function readAll(h: Harness, limit: number, from?: string, type?: string) {
  const events: any[] = [];
  let cursor = from;
  for (;;) {
    const query = new URLSearchParams({ limit: String(limit) });
    if (type !== undefined) query.set('type', type);
    if (cursor !== undefined) query.set('cursor', cursor);
    const result = await h.call('GET', `/v1/events?${query}`);
    assert.equal(result.status, 200, result.text);
    events.push(...result.json);
    cursor = nextCursor(result);
    if (result.json.length < limit) return { events, cursor };
  }
}

eachBackend((backend) => {
  describe(`events feed [${backend.name}]`, () => {
    test('each change records its events, with the resource as the API returned it', async (t) => {
      const h = await startHarness(t, backend);
      const empty = await h.call('GET', '/v1/events');
      assert.equal(empty.status, 200);
      assert.deepEqual(empty.json, []);
      const start = nextCursor(empty);

      const rex = (await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 } })).json;
      const tom = (await h.call('POST', '/v1/pets', { body: { name: 'Tom', categoryId: 2, status: 'sold' } })).json;
      const order = (await h.call('POST', '/v1/store/orders', { body: { petId: rex.id } })).json;
      const approved = (await h.call('PATCH', `/v1/store/orders/${order.id}`, { body: { status: 'approved' } })).json;
      const delivered = (await h.call('PATCH', `/v1/store/orders/${order.id}`, { body: { status: 'delivered' } })).json;
      const kim = (await h.call('POST', '/v1/pets', { body: { name: 'Kim', categoryId: 1 } })).json;
      const second = (await h.call('POST', '/v1/store/orders', { body: { petId: kim.id } })).json;
      const cancelled = (await h.call('PATCH', `/v1/store/orders/${second.id}`, { body: { status: 'cancelled' } }))
        .json;
      const pet = (id: number) => h.call('GET', `/v1/pets/${id}`).then((r) => r.json);

      await settledFeed(get(h), 12);
      const { events } = await readAll(h, 100, start);
      const shape = events.map((event) => [event.type, event.data, event.previousStatus]);
      assert.deepEqual(shape, [
        ['pet.created', rex, undefined],
        ['pet.created', tom, undefined],
        ['order.placed', order, undefined],
        ['pet.status_changed', { ...rex, status: 'pending' }, 'available'],
        ['order.status_changed', approved, 'placed'],
        ['order.status_changed', delivered, 'approved'],
        ['pet.status_changed', await pet(rex.id), 'pending'],
        ['pet.created', kim, undefined],
        ['order.placed', second, undefined],
        ['pet.status_changed', { ...kim, status: 'pending' }, 'available'],
        ['order.status_changed', cancelled, 'placed'],
        ['pet.status_changed', await pet(kim.id), 'pending'],
      ]);
      const ids = events.map((event) => event.id);
      assert.equal(new Set(ids).size, ids.length, 'ids are unique');
      for (const event of events) {
        assert.match(event.id, /^[^.]+$/, 'an id contains no "."');
        assert.ok(Math.abs(Date.parse(event.timestamp) - Date.now()) < 60_000);
        assert.match(event.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        const keys = [
          'data',
          'id',
          'subject',
          'timestamp',
          'type',
          ...(event.type.endsWith('status_changed') ? ['previousStatus'] : []),
          ...(event.type.startsWith('pet.') ? ['etag'] : []),
        ];
        assert.deepEqual(Object.keys(event).sort(), keys.sort());
      }
      assert.deepEqual(await feed(h, '?limit=100'), events, 'without a cursor the feed starts at the oldest');
    });

    test("every event says what it is about: its type's prefix and its data's id", async (t) => {
      const h = await startHarness(t, backend, SENDS_LOCALLY);
      const expected = await recordEveryType(t, h);
      const events = await settledFeed(get(h), expected.length);
      assert.deepEqual(
        events.map((event) => [event.type, event.subject]),
        expected,
      );
      for (const event of events) assert.equal(event.subject.split('/')[1], String(event.data.id));
    });

    test('refused and replayed writes record nothing', async (t) => {
      const h = await startHarness(t, backend);
      const sold = (await h.call('POST', '/v1/pets', { body: { name: 'Old', categoryId: 1, status: 'sold' } })).json;
      const before = await settledFeed(get(h), 1);
      expectError(await h.call('POST', '/v1/store/orders', { body: { petId: sold.id } }), 409, 'conflict');
      expectError(await h.call('POST', '/v1/store/orders', { body: { petId: 999999 } }), 404, 'not_found');
      expectError(await h.call('POST', '/v1/pets', { body: { name: '', categoryId: 1 } }), 400, 'invalid_request');
      const headers = { 'idempotency-key': 'once-1' };
      const first = await h.call('POST', '/v1/pets', { body: { name: 'Once', categoryId: 1 }, headers });
      const again = await h.call('POST', '/v1/pets', { body: { name: 'Once', categoryId: 1 }, headers });
      assert.equal(again.json.id, first.json.id);
      const order = (await h.call('POST', '/v1/store/orders', { body: { petId: first.json.id } })).json;
      expectError(
        await h.call('PATCH', `/v1/store/orders/${order.id}`, { body: { status: 'delivered' } }),
        409,
        'conflict',
      );
      const after = await settledFeed(get(h), before.length + 3);
      assert.deepEqual(
        after.slice(before.length).map((event) => event.type),
        ['pet.created', 'order.placed', 'pet.status_changed'],
      );
    });

    test('pages never skip or repeat, and the Link always continues where the page ended', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(7);
      await settledFeed(get(h), 7);
      const { events, cursor } = await readAll(h, 3);
      assert.deepEqual(
        events.map((event) => event.data.name),
        Array.from({ length: 7 }, (_, i) => `pet-${i}`),
      );
      // After the end, the same position: polling it later returns only what is new.
      const idle = await h.call('GET', `/v1/events?limit=3&cursor=${encodeURIComponent(cursor)}`);
      assert.deepEqual(idle.json, []);
      assert.equal(nextCursor(idle), cursor);
      await h.createPets(2, (i) => ({ name: `late-${i}`, categoryId: 1 }));
      await settledFeed(get(h), 9);
      const later = await feed(h, `?limit=3&cursor=${encodeURIComponent(cursor)}`);
      assert.deepEqual(
        later.map((event) => event.data.name),
        ['late-0', 'late-1'],
      );
    });

    test('the type filter, and its cursors', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(3);
      await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } });
      await settledFeed(get(h), 5);
      const placed = await readAll(h, 1, undefined, 'order.placed');
      assert.deepEqual(
        placed.events.map((event) => event.type),
        ['order.placed'],
      );
      const created = await feed(h, '?type=pet.created');
      assert.equal(created.length, 3);
      // A cursor issued for one filter is refused by another, naming the filter it was issued for.
      const message = expectError(
        await h.call('GET', `/v1/events?type=pet.created&cursor=${encodeURIComponent(placed.cursor)}`),
        400,
        'invalid_request',
      );
      assert.match(message, /type=order\.placed/);
      const plain = nextCursor(await h.call('GET', '/v1/events'));
      assert.match(
        expectError(
          await h.call('GET', `/v1/events?type=order.placed&cursor=${encodeURIComponent(plain)}`),
          400,
          'invalid_request',
        ),
        /no type filter/,
      );
    });

    test('bad queries are 400, keys are required, read scope suffices', async (t) => {
      const h = await startHarness(t, backend);
      for (const query of [
        '?type=pet.removed',
        '?limit=0',
        '?limit=101',
        '?limit=x',
        '?cursor=',
        '?cursor=abc.def',
        '?since=1',
      ]) {
        expectError(await h.call('GET', `/v1/events${query}`), 400, 'invalid_request');
      }
      await h.createPets(2);
      const petsLink = (await h.call('GET', '/v1/pets?limit=1')).headers.get('link') ?? '';
      // A pets page's cursor is not an events cursor.
      const pageCursor = new URL(/<([^>]+)>/.exec(petsLink)?.[1] ?? '', 'http://x').searchParams.get('cursor');
      expectError(await h.call('GET', `/v1/events?cursor=${pageCursor}`), 400, 'invalid_request');
      expectError(await h.call('GET', '/v1/events', { key: null }), 401, 'unauthorized');
      expectError(await h.call('GET', '/v1/events', { key: 'nope' }), 401, 'unauthorized');
      assert.equal((await h.call('GET', '/v1/events', { key: h.keys.read })).status, 200);
      expectError(await h.call('GET', '/v1/events', { key: h.keys.write }), 403, 'forbidden');
      expectError(await h.call('POST', '/v1/events', { body: {} }), 405, 'method_not_allowed');
    });

    test('a cursor behind what retention removed is 410; the feed without one still reads', async (t) => {
      const h = await startHarness(t, backend);
      const start = nextCursor(await h.call('GET', '/v1/events'));
      await h.createPets(3);
      await settledFeed(get(h), 3);
      const { cursor: end } = await readAll(h, 100);
      assert.deepEqual(await h.store.events.purge(new Date(Date.now() + 60_000), new Date()), {
        events: 3,
        expired: 0,
      });
      const message = expectError(await h.call('GET', `/v1/events?cursor=${encodeURIComponent(start)}`), 410, 'gone');
      assert.match(message, /kept 30 days/);
      // A cursor at or after what was removed reads on; so does a reader starting afresh.
      assert.deepEqual(await feed(h, `?cursor=${encodeURIComponent(end)}`), []);
      assert.deepEqual(await feed(h), []);
      await h.createPets(1);
      await settledFeed(get(h), 1);
      assert.equal((await feed(h, `?cursor=${encodeURIComponent(end)}`)).length, 1);
      const kept = await h.store.events.purge(new Date(Date.now() - 60_000), new Date());
      assert.deepEqual(kept, { events: 0, expired: 0 }, 'newer events stay');
    });

    test('a reader paging while two instances write sees every event once', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      const writers = [h, other].map(async (instance, w) => {
        for (let i = 0; i < 60; i++) {
          const result = await instance.call('POST', '/v1/pets', { body: { name: `w${w}-${i}`, categoryId: 1 } });
          assert.equal(result.status, 201);
          if (i % 10 === 0) {
            const [pet] = await instance.createPets(1, () => ({ name: `o${w}-${i}`, categoryId: 1 }));
            await instance.call('POST', '/v1/store/orders', { body: { petId: pet.id } });
          }
        }
      });
      const seen: any[] = [];
      let cursor: string | undefined;
      let done = false;
      const written = Promise.all(writers).finally(() => {
        done = true;
      });
      const reader = (async () => {
        for (;;) {
          const finished = done;
          const page = await readAll(h, 7, cursor);
          seen.push(...page.events);
          cursor = page.cursor;
          if (finished) return;
        }
      })();
      await written;
      await reader;
      const all = await settledFeed(get(h), 2 * (60 + 6 * 3));
      assert.equal(all.length, 2 * (60 + 6 * 3));
      assert.deepEqual(
        seen.map((event) => event.id),
        all.map((event) => event.id),
        'the paging reader saw every event exactly once, in feed order',
      );
    });
  });
});
