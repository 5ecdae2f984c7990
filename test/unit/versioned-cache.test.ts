import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VersionedCache } from '../../src/cache/versioned-cache.js';

test('versioned cache: one load per key and token, shared while it runs; a failed load is not kept', async () => {
  const cache = new VersionedCache<string>(10);
  let loads = 0;
  const load = (value: string) => async () => {
    loads += 1;
    return value;
  };
  const [a, b] = await Promise.all([cache.get('t1', 'k', load('v1')), cache.get('t1', 'k', load('other'))]);
  assert.deepEqual([a, b, loads], ['v1', 'v1', 1]);
  assert.equal(await cache.get('t2', 'k', load('v2')), 'v2', 'another token: loaded again');
  assert.equal(await cache.get('t1', 'k', load('other')), 'v1', 'a request holding the older token is served under it');

  await assert.rejects(
    cache.get('t3', 'k', async () => {
      throw new Error('database unavailable');
    }),
  );
  assert.equal(await cache.get('t3', 'k', load('v3')), 'v3', 'the failure was not kept');
});
