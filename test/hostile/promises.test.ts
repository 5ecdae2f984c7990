import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectError } from '../helpers/calls.js';
import { sized } from './body-generators.js';
import { snapshot } from './oracle.js';
import { BODY_LIMIT } from './settings.js';
import { hostileSuite } from './world.js';

/** What the decision records (docs/decisions.md) promise for hostile input, checked by hand on both stores. */
hostileSuite(({ world }) => {
  test('the documented promises, by hand; a refused request changes nothing', async (t) => {
    const w = await world(t);
    const { h } = w;
    const unchanged = async (what: string, call: () => Promise<void>) => {
      const before = await snapshot(h, w.counter);
      await call();
      assert.deepEqual(await snapshot(h, w.counter), before, `${what} changed the store`);
    };
    await unchanged('an unknown query parameter', async () => {
      for (const list of ['/v1/pets', '/v1/store/orders']) {
        const message = expectError(await h.call('GET', `${list}?stauts=sold`), 400, 'invalid_request');
        assert.match(message, /stauts/);
      }
    });
    await unchanged('a repeated limit', async () => {
      for (const list of ['/v1/pets', '/v1/store/orders']) {
        const message = expectError(await h.call('GET', `${list}?limit=1&limit=2`), 400, 'invalid_request');
        assert.match(message, /limit.*at most once/);
      }
    });
    await unchanged('a __proto__ key', async () => {
      const body = '{"name":"x","categoryId":1,"__proto__":{}}';
      expectError(await h.call('POST', '/v1/pets', { body }), 400, 'invalid_request');
      expectError(
        await h.call('POST', '/v1/store/orders', { body: '{"petId":3,"__proto__":{}}' }),
        400,
        'invalid_request',
      );
    });
    await unchanged('a 70 KiB body', async () => {
      const body = JSON.stringify({ name: 'x'.repeat(70 * 1024), categoryId: 1 });
      expectError(await h.call('POST', '/v1/pets', { body }), 413, 'payload_too_large');
      const padded = `{"petId":3}${' '.repeat(70 * 1024)}`;
      expectError(await h.call('POST', '/v1/store/orders', { body: padded }), 413, 'payload_too_large');
    });
    await unchanged('a text/plain body', async () => {
      const headers = { 'content-type': 'text/plain' };
      const body = '{"name":"x","categoryId":1}';
      expectError(await h.call('POST', '/v1/pets', { body, headers }), 415, 'unsupported_media_type');
      const change = { body: '{"status":"cancelled"}', headers };
      expectError(await h.call('PATCH', '/v1/store/orders/1', change), 415, 'unsupported_media_type');
    });
    // The limit is on bytes: exactly 64 KiB is read (and refused for its content), one byte more is 413.
    const atLimit = sized('{"name":"x","categoryId":1}', BODY_LIMIT, true);
    assert.equal(Buffer.byteLength(atLimit), BODY_LIMIT);
    expectError(await h.call('POST', '/v1/pets', { body: atLimit }), 400, 'invalid_request');
    expectError(await h.call('POST', '/v1/pets', { body: `${atLimit} ` }), 413, 'payload_too_large');
  });
});
