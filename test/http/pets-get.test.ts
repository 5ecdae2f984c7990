import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError } from '../helpers/calls.js';
import { startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';

const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';

function assertDeprecationHeaders(headers: Headers): void {
  assert.match(headers.get('deprecation') ?? '', /^@\d+$/, 'Deprecation is an RFC 9745 structured date');
  const deprecatedAt = Number((headers.get('deprecation') ?? '@0').slice(1)) * 1000;
  assert.ok(deprecatedAt <= Date.parse(SUNSET), 'deprecated before the sunset');
  assert.equal(headers.get('sunset'), SUNSET);
  const link = headers.get('link') ?? '';
  assert.match(link, /<\/v1\/pets>; rel="successor-version"/);
  // The notice is the operation's entry in the interactive reference (its page is tested in docs.test.ts).
  assert.match(link, /<\/docs#\/pets\/getPet>; rel="deprecation"/);
}

eachBackend((backend) => {
  describe(`getPet [${backend.name}]`, () => {
    test('200 with the pet, and the deprecation headers', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      const result = await h.call('GET', `/v1/pets/${pet.id}`);
      assert.equal(result.status, 200);
      assert.deepEqual(result.json, pet);
      assertDeprecationHeaders(result.headers);
    });

    test('404 with the Error body for a pet that does not exist, deprecation headers included', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(2);
      for (const id of ['3', '0', '-1', '9007199254740991', '00001234']) {
        const result = await h.call('GET', `/v1/pets/${id}`);
        assert.match(expectError(result, 404, 'not_found'), /does not exist/);
        assertDeprecationHeaders(result.headers);
      }
    });

    test('401 without a key, deprecation headers included', async (t) => {
      const h = await startHarness(t, backend);
      const result = await h.call('GET', '/v1/pets/1', { key: null });
      expectError(result, 401, 'unauthorized');
      assertDeprecationHeaders(result.headers);
    });

    test('a petId that is not an int64 the service can represent is 400 naming the parameter', async (t) => {
      const h = await startHarness(t, backend);
      const cases: Array<[string, RegExp]> = [
        ['abc', /path parameter "petId" must be an integer/],
        ['1.5', /path parameter "petId" must be an integer/],
        ['1e3', /path parameter "petId" must be an integer/],
        ['0x10', /path parameter "petId" must be an integer/],
        ['%20', /path parameter "petId" must be an integer/],
        ['9007199254740992', /path parameter "petId" must be <= 9007199254740991/],
        ['9223372036854775807', /path parameter "petId" must be <= 9007199254740991/],
        ['99999999999999999999999', /path parameter "petId" must be <= 9007199254740991/],
      ];
      for (const [id, rule] of cases) {
        const message = expectError(await h.call('GET', `/v1/pets/${id}`), 400, 'invalid_request');
        assert.match(message, rule, `petId ${id}`);
      }
    });

    test('after the sunset instant the operation answers 410 gone', async (t) => {
      let now = new Date('2030-12-04T23:59:59.999Z');
      const h = await startHarness(t, backend, { clock: () => now });
      const [pet] = await h.createPets(1);
      assert.equal((await h.call('GET', `/v1/pets/${pet.id}`)).status, 200);
      now = new Date('2030-12-05T00:00:00.000Z');
      const gone = await h.call('GET', `/v1/pets/${pet.id}`);
      assert.match(expectError(gone, 410, 'gone'), /removed on 2030-12-05/);
      assertDeprecationHeaders(gone.headers);
      expectError(await h.call('GET', '/v1/pets/abc'), 410, 'gone');
      expectError(await h.call('GET', `/v1/pets/${pet.id}`, { key: null }), 401, 'unauthorized');
      assert.equal((await h.call('GET', '/v1/pets')).status, 200, 'the successor keeps working');
    });

    test('HEAD answers like GET without a body', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      const result = await h.call('HEAD', `/v1/pets/${pet.id}`);
      assert.equal(result.status, 200);
      assert.equal(result.text, '');
      assertDeprecationHeaders(result.headers);
    });
  });
});
