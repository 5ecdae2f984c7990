import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError } from '../helpers/calls.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

async function petCount(h: Harness): Promise<number> {
  let count = 0;
  let path: string | undefined = '/v1/pets?limit=100';
  while (path !== undefined) {
    const page = await h.call('GET', path);
    assert.equal(page.status, 200);
    count += page.json.length;
    path = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return count;
}

/** Sends a request that must be refused with 400 (or the given status) and checks nothing was written. */
async function refused(h: Harness, options: Parameters<Harness['call']>[2], status = 400, code = 'invalid_request') {
  const before = await petCount(h);
  const result = await h.call('POST', '/v1/pets', options);
  const message = expectError(result, status, code);
  assert.equal(await petCount(h), before, 'a refused create must write nothing');
  return message;
}

eachBackend((backend) => {
  describe(`createPet [${backend.name}]`, () => {
    test('201 with the full Pet, the assigned int64 id and Location', async (t) => {
      const h = await startHarness(t, backend);
      const result = await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 7, status: 'sold' } });
      assert.equal(result.status, 201);
      assert.ok(Number.isSafeInteger(result.json.id) && result.json.id >= 1);
      assert.deepEqual(result.json, { id: result.json.id, name: 'Rex', categoryId: 7, status: 'sold' });
      assert.equal(result.headers.get('location'), `/v1/pets/${result.json.id}`);
      const fetched = await h.call('GET', `/v1/pets/${result.json.id}`);
      assert.deepEqual(fetched.json, result.json);
    });

    test('status defaults to available', async (t) => {
      const h = await startHarness(t, backend);
      const result = await h.call('POST', '/v1/pets', { body: { name: 'Tom', categoryId: 1 } });
      assert.equal(result.status, 201);
      assert.equal(result.json.status, 'available');
    });

    test('every PetStatus value is accepted', async (t) => {
      const h = await startHarness(t, backend);
      for (const status of ['available', 'pending', 'sold']) {
        const result = await h.call('POST', '/v1/pets', { body: { name: 'x', categoryId: 1, status } });
        assert.equal(result.status, 201);
        assert.equal(result.json.status, status);
      }
    });

    test('Location is absolute under PUBLIC_URL', async (t) => {
      const h = await startHarness(t, backend, { publicUrl: 'https://pets.example.com' });
      const result = await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 } });
      assert.equal(result.headers.get('location'), `https://pets.example.com/v1/pets/${result.json.id}`);
    });

    test('name: stored as sent, 1 to 200 characters after trimming, counted in Unicode characters', async (t) => {
      const h = await startHarness(t, backend);
      for (const name of [
        '  padded  ',
        'a',
        'x'.repeat(200),
        `  ${'y'.repeat(200)}  `,
        '🐶'.repeat(200),
        'Ünïcødé 名前',
      ]) {
        const result = await h.call('POST', '/v1/pets', { body: { name, categoryId: 1 } });
        assert.equal(result.status, 201, `name ${JSON.stringify(name)}: ${result.text}`);
        assert.equal(result.json.name, name);
      }
      assert.match(
        await refused(h, { body: { name: 'x'.repeat(201), categoryId: 1 } }),
        /body\.name must have at most 200 characters after trimming \(it has 201\)/,
      );
      assert.match(await refused(h, { body: { name: '🐶'.repeat(201), categoryId: 1 } }), /body\.name.*200/);
      assert.match(await refused(h, { body: { name: '', categoryId: 1 } }), /body\.name/);
      assert.match(await refused(h, { body: { name: '   ', categoryId: 1 } }), /body\.name .*other than white space/);
      assert.match(await refused(h, { body: { name: '\t\u3000 ', categoryId: 1 } }), /body\.name/);
    });

    test('name: control characters, NUL and unpaired surrogates are refused', async (t) => {
      const h = await startHarness(t, backend);
      for (const name of ['a\u0000b', 'tab\there', 'line\nbreak', 'del\u007f', 'c1\u0085', 'lone\ud800', '\udc00x']) {
        const message = await refused(h, { body: `{"name":${JSON.stringify(name)},"categoryId":1}` });
        assert.match(message, /body\.name must not contain control characters/);
      }
    });

    test('name: bidirectional controls, and names with nothing visible, are refused', async (t) => {
      const h = await startHarness(t, backend);
      // U+202E shows "\u202Egnp.exe" as "exe.png"; every Bidi_Control character is refused.
      for (const name of [
        '\u202egnp.exe',
        'a\u202ab',
        'x\u202d',
        'x\u2066y\u2069',
        '\u2067x',
        'x\u200f',
        'x\u200e',
        '\u061cx',
      ]) {
        const message = await refused(h, { body: { name, categoryId: 1 } });
        assert.match(
          message,
          /body\.name must not contain .*bidirectional formatting characters/,
          JSON.stringify(name),
        );
      }
      for (const name of [
        '\u200b',
        '\u00ad',
        '\u200b\u200c\u200d',
        ' \u2060 ',
        '\u3164',
        '\u115f\u1160',
        '\ufe0f',
        '\u{e0041}',
      ]) {
        const message = await refused(h, { body: { name, categoryId: 1 } });
        assert.equal(
          message,
          'body.name must contain a character other than white space and invisible characters',
          JSON.stringify(name),
        );
      }
      // Invisible characters inside a visible name stay: emoji sequences and some scripts need joiners.
      const kept = ['👩\u200d🚀', 'Fluff\u00ady', 'רקס', 'ركس', '\u200bRex'];
      for (const name of kept) {
        const result = await h.call('POST', '/v1/pets', { body: { name, categoryId: 1 } });
        assert.equal(result.status, 201, `${JSON.stringify(name)}: ${result.text}`);
      }
      const stored = (await h.call('GET', '/v1/pets')).json.map((pet: { name: string }) => pet.name);
      assert.deepEqual(stored, kept, 'only the accepted names were stored, as sent');
    });

    test('name: wrong types are refused', async (t) => {
      const h = await startHarness(t, backend);
      for (const name of [null, 42, true, ['a'], { a: 1 }]) {
        assert.match(await refused(h, { body: { name, categoryId: 1 } }), /body\.name must be of type string/);
      }
    });

    test('categoryId: an integer from 1 to 2^53-1; values beyond are refused, never rounded', async (t) => {
      const h = await startHarness(t, backend);
      const biggest = await h.call('POST', '/v1/pets', { body: `{"name":"big","categoryId":${MAX_SAFE}}` });
      assert.equal(biggest.status, 201);
      assert.equal(biggest.json.categoryId, MAX_SAFE);
      assert.match(biggest.text, /"categoryId":9007199254740991/);
      for (const literal of ['9007199254740992', '9007199254740993', '9223372036854775807', '1e300']) {
        const message = await refused(h, { body: `{"name":"x","categoryId":${literal}}` });
        assert.match(message, /body\.categoryId must be <= 9007199254740991/);
      }
      assert.match(await refused(h, { body: { name: 'x', categoryId: 0 } }), /body\.categoryId must be >= 1/);
      assert.match(await refused(h, { body: { name: 'x', categoryId: -5 } }), /body\.categoryId must be >= 1/);
      assert.match(await refused(h, { body: { name: 'x', categoryId: 1.5 } }), /body\.categoryId must be an integer/);
      assert.match(await refused(h, { body: { name: 'x', categoryId: '1' } }), /body\.categoryId must be an integer/);
      assert.match(await refused(h, { body: { name: 'x', categoryId: null } }), /body\.categoryId must be an integer/);
    });

    test('required fields are named when missing', async (t) => {
      const h = await startHarness(t, backend);
      assert.equal(await refused(h, { body: { categoryId: 1 } }), 'body.name is required');
      assert.equal(await refused(h, { body: { name: 'x' } }), 'body.categoryId is required');
      assert.equal(await refused(h, { body: {} }), 'body.name is required');
    });

    test('status: only PetStatus values', async (t) => {
      const h = await startHarness(t, backend);
      for (const status of ['lost', 'AVAILABLE', '', null, 1]) {
        const message = await refused(h, { body: { name: 'x', categoryId: 1, status } });
        assert.match(message, /body\.status must be one of: available, pending, sold/);
      }
    });

    test('client-sent id and unknown fields are refused, naming the field', async (t) => {
      const h = await startHarness(t, backend);
      assert.match(await refused(h, { body: { id: 5, name: 'x', categoryId: 1 } }), /body\.id must not be sent/);
      assert.match(await refused(h, { body: { name: 'x', categoryId: 1, colour: 'red' } }), /unknown field "colour"/);
      assert.match(await refused(h, { body: { name: 'x', categoryid: 1 } }), /categoryI?d/);
    });

    test('prototype-polluting keys are refused', async (t) => {
      const h = await startHarness(t, backend);
      await refused(h, { body: '{"name":"x","categoryId":1,"__proto__":{"admin":true}}' });
      await refused(h, { body: '{"name":"x","categoryId":1,"constructor":{"prototype":{"admin":true}}}' });
    });

    test('the body must be a JSON object', async (t) => {
      const h = await startHarness(t, backend);
      assert.match(await refused(h, { body: '{"name": "x", ' }), /not valid JSON/);
      assert.match(await refused(h, { body: '[]' }), /body must be of type object/);
      assert.match(await refused(h, { body: '"text"' }), /body must be of type object/);
      assert.match(await refused(h, { body: 'null' }), /JSON object body is required|must be of type object/);
      assert.match(await refused(h, { headers: { 'content-type': 'application/json' }, body: '' }), /empty/);
      assert.match(await refused(h, {}), /JSON object body is required/);
    });

    test('415 for anything but application/json', async (t) => {
      const h = await startHarness(t, backend);
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/xml',
        'multipart/form-data',
      ]) {
        await refused(
          h,
          { headers: { 'content-type': type }, body: '{"name":"x","categoryId":1}' },
          415,
          'unsupported_media_type',
        );
      }
      const withCharset = await h.call('POST', '/v1/pets', {
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: '{"name":"x","categoryId":1}',
      });
      assert.equal(withCharset.status, 201);
    });

    test('413 for a body over 64 KiB', async (t) => {
      const h = await startHarness(t, backend);
      const name = 'x'.repeat(64 * 1024);
      await refused(h, { body: { name, categoryId: 1 } }, 413, 'payload_too_large');
    });

    test('200 concurrent creates get unique ids and are all found afterwards', async (t) => {
      const h = await startHarness(t, backend);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => h.call('POST', '/v1/pets', { body: { name: `c${i}`, categoryId: 1 } })),
      );
      assert.ok(results.every((r) => r.status === 201));
      const ids = results.map((r) => r.json.id);
      assert.equal(new Set(ids).size, 200);
      for (const result of results) {
        const fetched = await h.call('GET', `/v1/pets/${result.json.id}`);
        assert.deepEqual(fetched.json, result.json);
      }
      assert.equal(await petCount(h), 200);
    });
  });
});
