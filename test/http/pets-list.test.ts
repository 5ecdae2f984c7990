import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError } from '../helpers/calls.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';

function nextLink(result: { headers: Headers }): string | undefined {
  const link = result.headers.get('link');
  if (link === null) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  assert.ok(match, `Link header is not a single rel="next" link: ${link}`);
  return match[1];
}

/** Follows rel="next" from `path` to the last page; returns every pet seen, in order. */
async function walk(h: Harness, path: string, onPage?: () => Promise<void>): Promise<any[]> {
  const seen: any[] = [];
  let next: string | undefined = path;
  while (next !== undefined) {
    const page = await h.call('GET', next);
    assert.equal(page.status, 200, page.text);
    seen.push(...page.json);
    next = nextLink(page);
    await onPage?.();
  }
  return seen;
}

eachBackend((backend) => {
  describe(`listPets [${backend.name}]`, () => {
    test('an empty store lists an empty array without a Link header', async (t) => {
      const h = await startHarness(t, backend);
      const result = await h.call('GET', '/v1/pets');
      assert.equal(result.status, 200);
      assert.deepEqual(result.json, []);
      assert.equal(result.headers.get('link'), null);
      assert.match(result.headers.get('content-type') ?? '', /^application\/json/);
    });

    test('default page size is 20, in ascending id order', async (t) => {
      const h = await startHarness(t, backend);
      const created = await h.createPets(25);
      const result = await h.call('GET', '/v1/pets');
      assert.equal(result.json.length, 20);
      assert.deepEqual(result.json, created.slice(0, 20));
      assert.ok(nextLink(result));
    });

    test('limit from 1 to 100 bounds the page', async (t) => {
      const h = await startHarness(t, backend);
      const created = await h.createPets(101);
      for (const limit of [1, 7, 100]) {
        const result = await h.call('GET', `/v1/pets?limit=${limit}`);
        assert.equal(result.status, 200);
        assert.deepEqual(result.json, created.slice(0, limit));
      }
    });

    test('invalid limits are 400 naming the parameter and the rule', async (t) => {
      const h = await startHarness(t, backend);
      const cases: Array<[string, RegExp]> = [
        ['0', /query parameter "limit" must be >= 1/],
        ['-1', /query parameter "limit" must be >= 1/],
        ['101', /query parameter "limit" must be <= 100/],
        ['1.5', /query parameter "limit" must be an integer/],
        ['abc', /query parameter "limit" must be an integer/],
        ['', /query parameter "limit" must be an integer/],
        ['1e1', /query parameter "limit" must be an integer/],
        ['0x10', /query parameter "limit" must be an integer/],
        ['99999999999999999999', /query parameter "limit" must be <= 100/],
      ];
      for (const [value, rule] of cases) {
        const message = expectError(await h.call('GET', `/v1/pets?limit=${value}`), 400, 'invalid_request');
        assert.match(message, rule, `limit=${value}`);
      }
      const twice = expectError(await h.call('GET', '/v1/pets?limit=1&limit=2'), 400, 'invalid_request');
      assert.match(twice, /query parameter "limit" must be given at most once/);
    });

    test('status filters by availability', async (t) => {
      const h = await startHarness(t, backend);
      const statuses = ['available', 'pending', 'sold', 'sold', 'pending', 'sold'];
      const created = await h.createPets(statuses.length, (i) => ({
        name: `p${i}`,
        categoryId: 1,
        status: statuses[i],
      }));
      for (const status of ['available', 'pending', 'sold']) {
        const result = await h.call('GET', `/v1/pets?status=${status}`);
        assert.equal(result.status, 200);
        assert.deepEqual(
          result.json,
          created.filter((pet) => pet.status === status),
        );
      }
    });

    test('an unknown status or query parameter is 400', async (t) => {
      const h = await startHarness(t, backend);
      for (const status of ['lost', 'SOLD', '']) {
        const message = expectError(await h.call('GET', `/v1/pets?status=${status}`), 400, 'invalid_request');
        assert.match(message, /query parameter "status" must be one of: available, pending, sold/);
      }
      const message = expectError(await h.call('GET', '/v1/pets?stauts=sold'), 400, 'invalid_request');
      assert.match(message, /unknown query parameter "stauts"/);
    });

    test('following rel="next" visits every pet exactly once, and the last page has no Link', async (t) => {
      const h = await startHarness(t, backend);
      const created = await h.createPets(45);
      const first = await h.call('GET', '/v1/pets?limit=10');
      const next = nextLink(first);
      assert.ok(next?.startsWith('/v1/pets?'));
      const params = new URL(next ?? '', 'http://x').searchParams;
      assert.equal(params.get('limit'), '10');
      assert.ok(params.get('cursor'));
      assert.deepEqual(await walk(h, '/v1/pets?limit=10'), created);
      const last = await h.call('GET', '/v1/pets?limit=45');
      assert.equal(last.json.length, 45);
      assert.equal(last.headers.get('link'), null, 'no next page when exactly the last pet is on this page');
    });

    test('pagination with a status filter keeps the filter in the next link', async (t) => {
      const h = await startHarness(t, backend);
      const created = await h.createPets(30, (i) => ({
        name: `p${i}`,
        categoryId: 1,
        status: i % 3 ? 'available' : 'sold',
      }));
      const first = await h.call('GET', '/v1/pets?limit=3&status=sold');
      const params = new URL(nextLink(first) ?? '', 'http://x').searchParams;
      assert.equal(params.get('status'), 'sold');
      const sold = await walk(h, '/v1/pets?limit=3&status=sold');
      assert.deepEqual(
        sold,
        created.filter((pet) => pet.status === 'sold'),
      );
    });

    test('links are absolute under PUBLIC_URL', async (t) => {
      const h = await startHarness(t, backend, { publicUrl: 'https://api.example.com/base' });
      await h.createPets(3);
      const link = nextLink(await h.call('GET', '/v1/pets?limit=1'));
      assert.match(link ?? '', /^https:\/\/api\.example\.com\/base\/v1\/pets\?limit=1&cursor=/);
    });

    test('no pet is skipped or repeated while others are inserted between pages', async (t) => {
      const h = await startHarness(t, backend);
      const before = await h.createPets(30);
      let added = 0;
      const seen = await walk(h, '/v1/pets?limit=7', async () => {
        await Promise.all(
          Array.from({ length: 5 }, () =>
            h.call('POST', '/v1/pets', { body: { name: `late${added++}`, categoryId: 2 } }),
          ),
        );
      });
      const ids = seen.map((pet) => pet.id);
      assert.equal(new Set(ids).size, ids.length, 'a pet was repeated');
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        ids,
        'pages are not in id order',
      );
      for (const pet of before) assert.ok(ids.includes(pet.id), `pet ${pet.id} was skipped`);
      const all = await walk(h, '/v1/pets?limit=100');
      const lastSeen = ids.at(-1);
      assert.deepEqual(
        ids,
        all.filter((pet) => pet.id <= lastSeen).map((pet) => pet.id),
        'a pet created before the walk passed it was skipped',
      );
    });

    test('a tampered, foreign or malformed cursor is 400', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(5);
      const cursor = new URL(nextLink(await h.call('GET', '/v1/pets?limit=2')) ?? '', 'http://x').searchParams.get(
        'cursor',
      );
      assert.ok(cursor);
      const [payload, mac] = cursor.split('.');
      const forged = `${Buffer.from('0:').toString('base64url')}.${mac}`;
      const flipped = `${payload}.${(mac ?? '').slice(0, -1)}${(mac ?? '').endsWith('A') ? 'B' : 'A'}`;
      for (const bad of [forged, flipped, 'abc', 'a.b.c', `${payload}.`, '..', 'x'.repeat(200)]) {
        const message = expectError(
          await h.call('GET', `/v1/pets?cursor=${encodeURIComponent(bad)}`),
          400,
          'invalid_request',
        );
        assert.match(message, /query parameter "cursor"/);
      }
      const tooLong = expectError(await h.call('GET', `/v1/pets?cursor=${'x'.repeat(201)}`), 400, 'invalid_request');
      assert.match(tooLong, /query parameter "cursor" must have at most 200 characters/);
    });

    test('a cursor reused with another status filter is 400', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(6, (i) => ({ name: `p${i}`, categoryId: 1, status: 'sold' }));
      const cursor = new URL(
        nextLink(await h.call('GET', '/v1/pets?limit=2&status=sold')) ?? '',
        'http://x',
      ).searchParams.get('cursor');
      const otherStatus = expectError(
        await h.call('GET', `/v1/pets?status=available&cursor=${cursor}`),
        400,
        'invalid_request',
      );
      assert.match(otherStatus, /issued for status=sold/);
      const noStatus = expectError(await h.call('GET', `/v1/pets?cursor=${cursor}`), 400, 'invalid_request');
      assert.match(noStatus, /issued for status=sold/);
      const ok = await h.call('GET', `/v1/pets?status=sold&cursor=${cursor}`);
      assert.equal(ok.status, 200);
    });

    test('a cursor from another instance on the same database is accepted', async (t) => {
      const first = await startHarness(t, backend);
      await first.createPets(4);
      const second = await first.startInstance();
      const link = nextLink(await first.call('GET', '/v1/pets?limit=2'));
      const result = await second.call('GET', link ?? '');
      assert.equal(result.status, 200);
      assert.equal(result.json.length, 2);
    });
  });
});
