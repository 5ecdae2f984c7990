import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';

/** How many times the store was asked for a page of pets, from /metrics. */
async function storeListCalls(h: Harness): Promise<number> {
  const text = (await h.call('GET', '/metrics', { key: null })).text;
  const line = text
    .split('\n')
    .find((l) => l.startsWith('petstore_store_call_duration_seconds_count{call="pets.list"'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const names = (result: { json: unknown }) => (result.json as { name: string }[]).map((pet) => pet.name);

eachBackend((backend) => {
  describe(`cached pages [${backend.name}]`, () => {
    test('a repeated page is served from the cache', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(3);
      const first = await h.call('GET', '/v1/pets?limit=2');
      const second = await h.call('GET', '/v1/pets?limit=2');
      assert.equal(second.text, first.text);
      assert.equal(second.headers.get('link'), first.headers.get('link'), 'the next link is kept with the page');
      assert.equal(second.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(await storeListCalls(h), 1);
    });

    test('concurrent requests for a page that is not cached share one read of the store', async (t) => {
      const h = await startHarness(t, backend);
      const burst = () => Promise.all(Array.from({ length: 20 }, () => h.call('GET', '/v1/pets?limit=2')));
      // The first burst opens the client's connections; the second arrives on them at once, after a write.
      await burst();
      await h.createPets(3);
      const before = await storeListCalls(h);
      const pages = await burst();
      assert.equal(new Set(pages.map((page) => page.text)).size, 1);
      assert.equal(pages[0]?.json.length, 2);
      assert.equal((await storeListCalls(h)) - before, 1);
    });

    test('a write in this process is seen by the next page', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(2);
      assert.deepEqual(names(await h.call('GET', '/v1/pets')), ['pet-0', 'pet-1']);
      await h.call('POST', '/v1/pets', { body: { name: 'late', categoryId: 1 } });
      assert.deepEqual(names(await h.call('GET', '/v1/pets')), ['pet-0', 'pet-1', 'late']);
      // A status change through an order, too: the filtered page moves at once.
      await h.call('GET', '/v1/pets?status=pending');
      const [pet] = (await h.call('GET', '/v1/pets')).json;
      await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } });
      assert.deepEqual(names(await h.call('GET', '/v1/pets?status=pending')), ['pet-0']);
    });

    test('a write acknowledged by another instance is seen by the next page here', async (t) => {
      const a = await startHarness(t, backend);
      const b = await a.startInstance();
      await a.createPets(2);
      for (let round = 0; round < 20; round++) {
        await a.call('GET', '/v1/pets?limit=100');
        const created = await b.call('POST', '/v1/pets', { body: { name: `from-b-${round}`, categoryId: 1 } });
        assert.equal(created.status, 201);
        const page = names(await a.call('GET', '/v1/pets?limit=100'));
        assert.equal(page.at(-1), `from-b-${round}`, `round ${round}: the page shows b's acknowledged write`);
        const order = await b.call('POST', '/v1/store/orders', { body: { petId: created.json.id } });
        assert.equal(order.status, 201);
        const pending = names(await a.call('GET', '/v1/pets?status=pending&limit=100'));
        assert.ok(pending.includes(`from-b-${round}`), `round ${round}: the status change is seen at once`);
      }
    });
  });
});
