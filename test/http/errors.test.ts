import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { ERROR_CODES } from '../../src/schemas/error-codes.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import type { Store } from '../../src/store/store.js';
import { expectError, request } from '../helpers/calls.js';
import { sharedHarness, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';

/** A store whose every method fails the way a broken disk or database would. */
function brokenStore(real: Store): Store {
  const fail = async () => {
    throw new Error('SQLITE_IOERR: disk I/O error at /secret/internal/path.db');
  };
  return {
    kind: real.kind,
    secret: (name) => real.secret(name),
    apiKeys: real.apiKeys,
    pets: { create: fail, createOnce: fail, get: fail, list: fail, update: fail, remove: fail },
    orders: { place: fail, placeOnce: fail, get: fail, list: fail, changeStatus: fail },
    events: { list: fail, get: fail, head: fail, purge: fail, watch: () => () => undefined },
    webhooks: { create: fail, get: fail, list: fail, update: fail, rotateSecret: fail, remove: fail, attempts: fail },
    deliveries: { claim: fail, unreached: () => false, finish: fail, release: fail, signingSecrets: fail, stats: fail },
    redeliveries: { resend: fail, recover: fail, sendTest: fail },
    endpointStarts: { take: fail, made: fail, holdBack: fail },
    audit: { record: fail, list: fail, purge: fail },
    purgeExpiredIdempotencyKeys: fail,
    ping: fail,
    changeToken: () => real.changeToken(),
    poolStats: () => real.poolStats(),
    close: () => real.close(),
  };
}

eachBackend((backend) => {
  describe(`errors [${backend.name}]`, () => {
    // The tests that only read share one service; those that change data start their own.
    const readOnly = sharedHarness(backend);

    test('unknown routes are 404 with the Error body', async () => {
      const h = await readOnly();
      for (const path of ['/', '/nope', '/v2/pets', '/v1/pets/1/owner']) {
        assert.match(expectError(await h.call('GET', path), 404, 'not_found'), /no route/, path);
      }
      // The router reads a trailing slash as an empty petId.
      expectError(await h.call('GET', '/v1/pets/'), 400, 'invalid_request');
    });

    test('wrong methods are 405 with Allow and the Error body', async () => {
      const h = await readOnly();
      const cases: Array<[string, string, string]> = [
        ['DELETE', '/v1/pets', 'GET, HEAD, POST'],
        ['PUT', '/v1/pets', 'GET, HEAD, POST'],
        ['PATCH', '/v1/pets', 'GET, HEAD, POST'],
        ['POST', '/v1/pets/1', 'GET, HEAD, PATCH, DELETE'],
        ['PUT', '/v1/pets/1', 'GET, HEAD, PATCH, DELETE'],
        ['POST', '/healthz', 'GET, HEAD'],
        ['DELETE', '/v1/openapi.json', 'GET, HEAD'],
      ];
      for (const [method, path, allow] of cases) {
        const result = await h.call(method, path);
        expectError(result, 405, 'method_not_allowed');
        assert.equal(result.headers.get('allow'), allow, `${method} ${path}`);
      }
      expectError(await h.call('DELETE', '/v1/pets', { key: null }), 401, 'unauthorized');
    });

    test('TRACE, which fetch cannot send, is 405 with Allow on a path that exists', async () => {
      const h = await readOnly();
      const trace = (path: string) =>
        new Promise<{ status: number; allow: string | undefined; text: string }>((resolve, reject) => {
          const req = http.request(h.url + path, {
            method: 'TRACE',
            headers: { authorization: `Bearer ${h.keys.all}` },
          });
          req.on('response', (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (chunk: string) => {
              text += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, text }));
          });
          req.on('error', reject);
          req.end();
        });
      for (const [path, allow] of [
        ['/v1/pets', 'GET, HEAD, POST'],
        ['/v1/pets/1', 'GET, HEAD, PATCH, DELETE'],
        ['/v1/store/orders/1', 'GET, HEAD, PATCH'],
        ['/healthz', 'GET, HEAD'],
      ] as const) {
        const result = await trace(path);
        assert.equal(result.status, 405, `TRACE ${path}: ${result.text}`);
        assert.equal(result.allow, allow, path);
        assert.deepEqual(Object.keys(JSON.parse(result.text)).sort(), ['code', 'message', 'status']);
        assert.equal(JSON.parse(result.text).code, 'method_not_allowed');
      }
      assert.equal((await trace('/nope')).status, 404);
    });

    test('unknown query parameters are 400 naming them on every operation, and change nothing', async (t) => {
      const h = await startHarness(t, backend);
      const [pet, spare] = await h.createPets(2);
      const order = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } });
      assert.equal(order.status, 201, order.text);
      const cases: Array<[string, string, unknown?]> = [
        ['GET', '/v1/pets?foo=1'],
        ['GET', `/v1/pets/${pet.id}?foo=1`],
        ['POST', '/v1/pets?foo=1', { name: 'typo', categoryId: 1 }],
        ['GET', '/v1/store/orders?foo=1'],
        ['GET', `/v1/store/orders/${order.json.id}?foo=1`],
        ['POST', '/v1/store/orders?foo=1', { petId: spare.id }],
        ['PATCH', `/v1/store/orders/${order.json.id}?foo=1`, { status: 'approved' }],
      ];
      for (const [method, path, body] of cases) {
        const message = expectError(await h.call(method, path, { body }), 400, 'invalid_request');
        assert.equal(message, 'unknown query parameter "foo"', `${method} ${path}`);
      }
      assert.deepEqual((await h.call('GET', '/v1/pets')).json, [{ ...pet, status: 'pending' }, spare]);
      assert.deepEqual((await h.call('GET', '/v1/store/orders')).json, [order.json]);
    });

    test('an unexpected failure is 500 internal_error, logged with the request id, without internals', async (t) => {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      const lines: string[] = [];
      const logs = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const app = await buildApp({ store: brokenStore(fixture.store), logger: { level: 'info', stream: logs } });
      t.after(() => app.close());
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const { key } = await issueApiKey(fixture.store, () => new Date(), { name: 'k' });
      for (const [method, path, body] of [
        ['GET', '/v1/pets', undefined],
        ['GET', '/v1/pets/1', undefined],
        ['POST', '/v1/pets', { name: 'x', categoryId: 1 }],
      ] as const) {
        const result = await request(url, method, path, { key, body });
        const message = expectError(result, 500, 'internal_error');
        assert.doesNotMatch(result.text, /SQLITE|secret|internal\/path|stack/i);
        const requestId = /request id (\S+)$/.exec(message)?.[1];
        assert.ok(requestId, message);
        const logged = lines
          .map((line) => JSON.parse(line))
          .find((entry) => entry.requestId === requestId && entry.err);
        assert.match(logged?.err?.message ?? '', /SQLITE_IOERR/, 'the cause is logged with the request id');
      }
      const ready = await request(url, 'GET', '/readyz', {});
      expectError(ready, 503, 'service_unavailable');
      assert.ok(ready.headers.get('retry-after'));
    });

    test('every error response is application/json with exactly code, message and status', async () => {
      const h = await readOnly();
      const results = [
        await h.call('GET', '/v1/pets', { key: null }),
        await h.call('GET', '/v1/pets?limit=0'),
        await h.call('GET', '/v1/pets/77'),
        await h.call('PUT', '/v1/pets'),
        await h.call('GET', '/missing'),
        await h.call('POST', '/v1/pets', { body: '{', headers: { 'content-type': 'application/json' } }),
        await h.call('POST', '/v1/pets', { body: 'x', headers: { 'content-type': 'text/plain' } }),
      ];
      for (const result of results) {
        assert.match(result.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(Object.keys(result.json).sort(), ['code', 'message', 'status']);
        assert.equal(result.json.status, result.status);
        assert.equal(ERROR_CODES[result.json.code as keyof typeof ERROR_CODES], result.status);
      }
    });

    test('health and readiness are public', async () => {
      const h = await readOnly();
      const health = await h.call('GET', '/healthz', { key: null });
      assert.equal(health.status, 200);
      assert.deepEqual(health.json, { status: 'ok' });
      const ready = await h.call('GET', '/readyz', { key: null });
      assert.equal(ready.status, 200);
      assert.equal(ready.json.status, 'ready');
    });
  });
});

test('docs/errors.md documents exactly the codes of the error table, with their statuses', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const documented = new Map(
    [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1], Number(match[2])]),
  );
  assert.deepEqual(Object.fromEntries(documented), ERROR_CODES);
});
