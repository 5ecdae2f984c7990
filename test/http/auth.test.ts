import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateApiKey } from '../../src/domain/api-key.js';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { expectError } from '../helpers/calls.js';
import { startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';

const REALM = 'Bearer realm="petstore"';
const INVALID = 'Bearer realm="petstore", error="invalid_token"';
const OPERATIONS: Array<[string, string, unknown?]> = [
  ['GET', '/v1/pets'],
  ['POST', '/v1/pets', { name: 'x', categoryId: 1 }],
  ['GET', '/v1/pets/1'],
];

eachBackend((backend) => {
  describe(`authentication [${backend.name}]`, () => {
    test('every operation answers 401 with WWW-Authenticate when the key is missing', async (t) => {
      const h = await startHarness(t, backend);
      for (const [method, path, body] of OPERATIONS) {
        const result = await h.call(method, path, { key: null, body });
        expectError(result, 401, 'unauthorized');
        assert.equal(result.headers.get('www-authenticate'), REALM);
      }
    });

    test('a refused key says whether the scheme is missing, the key is malformed, or it is refused', async (t) => {
      const h = await startHarness(t, backend);
      const lastChar = h.keys.all.at(-1) === 'a' ? 'b' : 'a';
      const typo = h.keys.all.slice(0, -1) + lastChar;
      const revoked = (await issueApiKey(h.store, () => new Date(), { name: 'revoked' })).key;
      assert.ok(await h.store.apiKeys.revoke('revoked', new Date(), CLI_AUDIT));
      const kinds: Array<[string, RegExp, string, string[]]> = [
        [
          'no Bearer scheme',
          /must use the Bearer scheme/,
          REALM,
          [h.keys.all, `Basic ${Buffer.from('user:pass').toString('base64')}`, `Token ${h.keys.all}`, 'Bearerx'],
        ],
        [
          'not well-formed',
          /not well-formed/,
          INVALID,
          [`Bearer ${typo}`, 'Bearer psk_short', 'Bearer not-a-key', 'Bearer', `Bearer ${h.keys.all} extra`],
        ],
        // Well-formed: whether it never existed or was revoked, the answer is the same.
        [
          'refused',
          /^the API key is invalid, expired or revoked$/,
          INVALID,
          [`Bearer ${generateApiKey()}`, `Bearer ${revoked}`],
        ],
      ];
      for (const [kind, message, challenge, headers] of kinds) {
        for (const header of headers) {
          for (const [method, path, body] of OPERATIONS) {
            const result = await h.call(method, path, { key: null, body, headers: { authorization: header } });
            assert.match(expectError(result, 401, 'unauthorized'), message, `${kind}: ${header}`);
            assert.equal(result.headers.get('www-authenticate'), challenge, `${kind}: ${header}`);
          }
        }
      }
    });

    test('the scheme name is case-insensitive', async (t) => {
      const h = await startHarness(t, backend);
      for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
        const result = await h.call('GET', '/v1/pets', {
          key: null,
          headers: { authorization: `${scheme} ${h.keys.all}` },
        });
        assert.equal(result.status, 200, scheme);
      }
    });

    test('a revoked key is refused on the next request, on every instance', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      const { key } = await issueApiKey(h.store, () => new Date(), { name: 'soon-revoked' });
      assert.equal((await h.call('GET', '/v1/pets', { key })).status, 200);
      assert.equal((await other.call('GET', '/v1/pets', { key })).status, 200);
      assert.ok(await h.store.apiKeys.revoke('soon-revoked', new Date(), CLI_AUDIT));
      expectError(await h.call('GET', '/v1/pets', { key }), 401, 'unauthorized');
      expectError(await other.call('GET', '/v1/pets', { key }), 401, 'unauthorized');
    });

    test('an expired key is refused from its expiry instant', async (t) => {
      let now = new Date('2027-01-01T00:00:00Z');
      const h = await startHarness(t, backend, { clock: () => now });
      const { key } = await issueApiKey(h.store, () => now, {
        name: 'expiring',
        expiresAt: new Date('2027-02-01T00:00:00Z'),
      });
      assert.equal((await h.call('GET', '/v1/pets', { key })).status, 200);
      now = new Date('2027-02-01T00:00:00Z');
      const result = await h.call('GET', '/v1/pets', { key });
      expectError(result, 401, 'unauthorized');
      assert.equal(result.headers.get('www-authenticate'), INVALID);
    });

    test('scopes: read lists and gets, write creates; a missing scope is 403 forbidden', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      assert.equal((await h.call('GET', '/v1/pets', { key: h.keys.read })).status, 200);
      assert.equal((await h.call('GET', `/v1/pets/${pet.id}`, { key: h.keys.read })).status, 200);
      const denied = await h.call('POST', '/v1/pets', { key: h.keys.read, body: { name: 'x', categoryId: 1 } });
      assert.match(expectError(denied, 403, 'forbidden'), /"write" scope/);
      assert.equal(
        (await h.call('POST', '/v1/pets', { key: h.keys.write, body: { name: 'x', categoryId: 1 } })).status,
        201,
      );
      expectError(await h.call('GET', '/v1/pets', { key: h.keys.write }), 403, 'forbidden');
      expectError(await h.call('GET', `/v1/pets/${pet.id}`, { key: h.keys.write }), 403, 'forbidden');
    });

    test('order of checks: 401 before 403 before 400, and nothing is written', async (t) => {
      const h = await startHarness(t, backend);
      const bad = { name: '', categoryId: -1, id: 3 };
      expectError(await h.call('POST', '/v1/pets', { key: null, body: bad }), 401, 'unauthorized');
      expectError(await h.call('POST', '/v1/pets', { key: null, body: '{broken' }), 401, 'unauthorized');
      expectError(
        await h.call('POST', '/v1/pets', { key: null, body: 'x', headers: { 'content-type': 'text/plain' } }),
        401,
        'unauthorized',
      );
      expectError(await h.call('GET', '/v1/pets?limit=0', { key: null }), 401, 'unauthorized');
      expectError(await h.call('GET', '/v1/pets/abc', { key: null }), 401, 'unauthorized');
      expectError(await h.call('POST', '/v1/pets', { key: h.keys.read, body: bad }), 403, 'forbidden');
      expectError(await h.call('POST', '/v1/pets', { key: h.keys.read, body: '{broken' }), 403, 'forbidden');
      expectError(await h.call('GET', '/v1/pets?limit=0', { key: h.keys.write }), 403, 'forbidden');
      expectError(await h.call('POST', '/v1/pets', { body: bad }), 400, 'invalid_request');
      assert.deepEqual((await h.call('GET', '/v1/pets')).json, []);
    });

    test('unknown paths under /v1 ask for a key first; public endpoints need none', async (t) => {
      const h = await startHarness(t, backend);
      expectError(await h.call('GET', '/v1/nothing-here', { key: null }), 401, 'unauthorized');
      expectError(await h.call('GET', '/v1/nothing-here'), 404, 'not_found');
      for (const path of ['/healthz', '/readyz', '/v1/openapi.json']) {
        assert.equal((await h.call('GET', path, { key: null })).status, 200, path);
      }
    });

    test('use records the last-used time without storing the key', async (t) => {
      const h = await startHarness(t, backend);
      const before = (await h.store.apiKeys.list()).find((key) => key.name === 'reader');
      assert.equal(before?.lastUsedAt, null);
      await h.call('GET', '/v1/pets', { key: h.keys.read });
      // The write is off the request path (it must never delay or fail the request): it lands just after.
      const lastUsed = async () => (await h.store.apiKeys.list()).find((key) => key.name === 'reader')?.lastUsedAt;
      for (let i = 0; i < 100 && (await lastUsed()) === null; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok((await lastUsed()) instanceof Date);
      assert.ok(!JSON.stringify(await h.store.apiKeys.list()).includes(h.keys.read));
    });
  });
});
