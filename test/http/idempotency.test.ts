import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { issueApiKey } from '../../src/services/api-keys.js';
import { expectError } from '../helpers/calls.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend, postgresUrl } from '../helpers/stores.js';

const withKey = (key: string) => ({ 'idempotency-key': key });

async function count(h: Harness, path: string): Promise<number> {
  return (await h.call('GET', `${path}?limit=100`)).json.length;
}

/** Pairs of keys whose `hashtext('owner:key')`, PostgreSQL's 32-bit text hash, is the same. */
async function collidingKeys(owner: number, pairs: number): Promise<string[][]> {
  const client = new pg.Client({ connectionString: await postgresUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ keys: string[] }>(
      `SELECT array_agg(k ORDER BY k) AS keys FROM (SELECT 'c' || n AS k FROM generate_series(1, 600000) AS n) AS c
       GROUP BY hashtext($1 || ':' || k) HAVING count(*) = 2 LIMIT $2`,
      [String(owner), pairs],
    );
    return rows.map((row) => row.keys);
  } finally {
    await client.end();
  }
}

eachBackend((backend) => {
  describe(`Idempotency-Key [${backend.name}]`, () => {
    test('a retry with the same key and body replays the first response; the effect happens once', async (t) => {
      const h = await startHarness(t, backend);
      const body = { name: 'Rex', categoryId: 3 };
      const first = await h.call('POST', '/v1/pets', { body, headers: withKey('"retry-1"') });
      assert.equal(first.status, 201);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const again = await h.call('POST', '/v1/pets', {
        body: { categoryId: 3, name: 'Rex' },
        headers: withKey('"retry-1"'),
      });
      assert.equal(again.status, 201);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.text, first.text, 'the same body, byte for byte');
      assert.equal(again.headers.get('location'), first.headers.get('location'));
      assert.match(again.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(await count(h, '/v1/pets'), 1);
      const bare = await h.call('POST', '/v1/pets', { body, headers: withKey('retry-1') });
      assert.equal(bare.headers.get('idempotent-replayed'), 'true', 'a bare token is the same key as its quoted form');
    });

    test('a retry that spells a default out is the same request; another value is not', async (t) => {
      const h = await startHarness(t, backend);
      const pet = await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 }, headers: withKey('d') });
      const spelled = { name: 'Rex', categoryId: 1, status: 'available' };
      const again = await h.call('POST', '/v1/pets', { body: spelled, headers: withKey('d') });
      assert.equal(again.headers.get('idempotent-replayed'), 'true', again.text);
      const sold = { ...spelled, status: 'sold' };
      expectError(await h.call('POST', '/v1/pets', { body: sold, headers: withKey('d') }), 422, 'idempotency_mismatch');
      const order = { petId: pet.json.id };
      assert.equal((await h.call('POST', '/v1/store/orders', { body: order, headers: withKey('o') })).status, 201);
      const one = await h.call('POST', '/v1/store/orders', { body: { ...order, quantity: 1 }, headers: withKey('o') });
      assert.equal(one.headers.get('idempotent-replayed'), 'true', one.text);
      const two = await h.call('POST', '/v1/store/orders', { body: { ...order, quantity: 2 }, headers: withKey('o') });
      expectError(two, 422, 'idempotency_mismatch');
    });

    test('the same key with another body is 422 idempotency_mismatch, and nothing is written', async (t) => {
      const h = await startHarness(t, backend);
      await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 }, headers: withKey('k') });
      const other = await h.call('POST', '/v1/pets', { body: { name: 'Tom', categoryId: 1 }, headers: withKey('k') });
      assert.match(expectError(other, 422, 'idempotency_mismatch'), /different request/);
      const pet = (await h.call('GET', '/v1/pets')).json[0];
      const onOrders = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id }, headers: withKey('k') });
      expectError(onOrders, 422, 'idempotency_mismatch');
      assert.equal(await count(h, '/v1/pets'), 1);
      assert.equal(await count(h, '/v1/store/orders'), 0);
    });

    test('keys are scoped per API key', async (t) => {
      const h = await startHarness(t, backend);
      const { key: otherKey } = await issueApiKey(h.store, () => new Date(), { name: 'other' });
      const body = { name: 'Rex', categoryId: 1 };
      const mine = await h.call('POST', '/v1/pets', { body, headers: withKey('shared') });
      const theirs = await h.call('POST', '/v1/pets', { key: otherKey, body, headers: withKey('shared') });
      assert.equal(theirs.status, 201);
      assert.equal(theirs.headers.get('idempotent-replayed'), null);
      assert.notEqual(theirs.json.id, mine.json.id);
    });

    test('placing an order: a retry replays the order instead of 409 for the now-pending pet', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      const first = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id }, headers: withKey('o-1') });
      assert.equal(first.status, 201);
      const retry = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id }, headers: withKey('o-1') });
      assert.equal(retry.status, 201);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.equal(retry.text, first.text);
      assert.equal(await count(h, '/v1/store/orders'), 1);
      const fresh = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id }, headers: withKey('o-2') });
      expectError(fresh, 409, 'conflict');
    });

    test('a refused request is not remembered: the same key works once the refusal no longer applies', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      const order = (await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } })).json;
      const refused = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id }, headers: withKey('later') });
      expectError(refused, 409, 'conflict');
      await h.call('PATCH', `/v1/store/orders/${order.id}`, { body: { status: 'cancelled' } });
      const placed = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id }, headers: withKey('later') });
      assert.equal(placed.status, 201);
      assert.equal(placed.headers.get('idempotent-replayed'), null);
    });

    test('concurrent duplicates on two instances: one effect; the others are 409 in flight or a replay', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      const body = { name: 'Dup', categoryId: 1 };
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? other : h).call('POST', '/v1/pets', { body, headers: withKey('dup') }),
        ),
      );
      const original = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
      assert.equal(original.length, 1, 'exactly one request performed the effect');
      for (const result of results) {
        if (result.status === 409) expectError(result, 409, 'conflict');
        else {
          assert.equal(result.status, 201, result.text);
          assert.equal(result.text, original[0]?.text);
        }
      }
      assert.equal(await count(h, '/v1/pets'), 1);
    });

    if (backend.name === 'postgres') {
      test('different keys in flight together never collide, not even where a 32-bit hash of them does', async (t) => {
        const h = await startHarness(t, backend);
        const owner = (await h.store.apiKeys.list()).find((key) => key.name === 'all')?.id as number;
        const pairs = await collidingKeys(owner, 20);
        assert.equal(pairs.length, 20);
        const refused: string[] = [];
        for (const pair of pairs) {
          const results = await Promise.all(
            pair.map((key) =>
              h.call('POST', '/v1/pets', { body: { name: key, categoryId: 1 }, headers: withKey(key) }),
            ),
          );
          for (const [i, result] of results.entries()) {
            if (result.status !== 201) refused.push(`${pair[i]} (with ${pair[1 - i]}): ${result.status}`);
            assert.equal(result.headers.get('idempotent-replayed'), null);
          }
        }
        assert.deepEqual(refused, [], `${refused.length} of ${pairs.length * 2} requests refused`);
        assert.equal(await count(h, '/v1/pets'), 40);
      });
    }

    test('after 24 hours a key may be used again, and expired records are purged', async (t) => {
      let now = new Date('2027-03-01T00:00:00Z');
      const h = await startHarness(t, backend, { clock: () => now });
      await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 }, headers: withKey('daily') });
      now = new Date('2027-03-01T23:59:59Z');
      const within = await h.call('POST', '/v1/pets', {
        body: { name: 'Tom', categoryId: 1 },
        headers: withKey('daily'),
      });
      expectError(within, 422, 'idempotency_mismatch');
      now = new Date('2027-03-02T00:00:01Z');
      const after = await h.call('POST', '/v1/pets', {
        body: { name: 'Tom', categoryId: 1 },
        headers: withKey('daily'),
      });
      assert.equal(after.status, 201);
      assert.equal(after.headers.get('idempotent-replayed'), null);
      assert.equal(
        await h.store.purgeExpiredIdempotencyKeys(new Date('2027-03-02T00:00:00Z')),
        0,
        'the new record is live',
      );
      assert.equal(await h.store.purgeExpiredIdempotencyKeys(new Date('2027-03-04T00:00:00Z')), 1);
    });

    test('a malformed key is 400, checked after authentication', async (t) => {
      const h = await startHarness(t, backend);
      for (const bad of ['', '""', 'x'.repeat(256), 'tab\there', 'ünïcode']) {
        const result = await h.call('POST', '/v1/pets', { body: { name: 'x', categoryId: 1 }, headers: withKey(bad) });
        assert.match(expectError(result, 400, 'invalid_request'), /Idempotency-Key/, JSON.stringify(bad));
      }
      expectError(
        await h.call('POST', '/v1/pets', { key: null, body: { name: 'x', categoryId: 1 }, headers: withKey('') }),
        401,
        'unauthorized',
      );
      assert.equal(await count(h, '/v1/pets'), 0);
    });

    test('the effect and its record commit together: if keeping the response fails, nothing happened', async (t) => {
      const h = await startHarness(t, backend);
      const once = {
        owner: 1,
        key: 'atomic',
        fingerprint: 'f',
        now: new Date(),
        expiresAt: new Date(Date.now() + 60_000),
        render: () => {
          throw new Error('cannot keep the response');
        },
      };
      await assert.rejects(h.store.pets.createOnce({ name: 'ghost', categoryId: 1, status: 'available' }, once));
      assert.equal(await count(h, '/v1/pets'), 0, 'the pet was rolled back with its record');
      const [pet] = await h.createPets(1);
      await assert.rejects(h.store.orders.placeOnce({ petId: pet.id, quantity: 1, createdAt: new Date() }, once));
      assert.equal((await h.call('GET', `/v1/pets/${pet.id}`)).json.status, 'available');
      assert.equal(await count(h, '/v1/store/orders'), 0);
    });
  });
});
