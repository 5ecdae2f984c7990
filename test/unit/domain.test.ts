import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { generateApiKey, hashApiKey, isWellFormedApiKey, parseScopes, sameHash } from '../../src/domain/api-key.js';
import { CursorCodec } from '../../src/domain/cursor.js';
import { petNameProblem } from '../../src/domain/pet-name.js';

describe('API key format', () => {
  test('generated keys are prefixed, base62, checksummed and distinct', () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) {
      assert.match(key, /^psk_[0-9A-Za-z]{36}$/);
      assert.ok(isWellFormedApiKey(key));
    }
    assert.equal(new Set(keys).size, keys.length);
  });

  test('any single-character typo fails the checksum', () => {
    const key = generateApiKey();
    for (let i = 4; i < key.length; i++) {
      const replacement = key[i] === 'a' ? 'b' : 'a';
      assert.equal(isWellFormedApiKey(key.slice(0, i) + replacement + key.slice(i + 1)), false, `position ${i}`);
    }
    for (const bad of ['', 'psk_', `${key}x`, key.slice(0, -1), key.replace('psk_', 'pk_x'), key.toUpperCase()]) {
      assert.equal(isWellFormedApiKey(bad), false, bad);
    }
  });

  test('hashes are SHA-256 hex and compare in constant time', () => {
    const key = generateApiKey();
    assert.match(hashApiKey(key), /^[0-9a-f]{64}$/);
    assert.ok(sameHash(hashApiKey(key), hashApiKey(key)));
    assert.equal(sameHash(hashApiKey(key), hashApiKey(generateApiKey())), false);
    assert.equal(sameHash(hashApiKey(key), 'abcd'), false);
  });

  test('scopes parse, deduplicate and refuse unknown names', () => {
    assert.deepEqual(parseScopes('write,read,read'), ['read', 'write']);
    assert.deepEqual(parseScopes(' read '), ['read']);
    assert.deepEqual(parseScopes('webhooks,admin'), ['admin', 'webhooks']);
    assert.throws(() => parseScopes('root'), /unknown scope "root"; scopes are: read, write, webhooks, admin/);
    assert.throws(() => parseScopes(','), /at least one/);
  });
});

describe('cursor codec', () => {
  const secret = randomBytes(32);
  const codec = new CursorCodec(secret, 'pets');

  test('round-trips a position and its filter', () => {
    for (const position of [
      { afterId: 0, filter: '' },
      { afterId: 42, filter: 'sold' },
      { afterId: Number.MAX_SAFE_INTEGER, filter: 'a:b.c' },
    ]) {
      assert.deepEqual(codec.decode(codec.encode(position)), position);
    }
  });

  test('refuses cursors altered in any character, or made with another secret or resource', () => {
    const cursor = codec.encode({ afterId: 1234, filter: 'pending' });
    for (let i = 0; i < cursor.length; i++) {
      const replacement = cursor[i] === 'A' ? 'B' : 'A';
      const altered = cursor.slice(0, i) + replacement + cursor.slice(i + 1);
      assert.equal(codec.decode(altered), undefined, `altered at ${i}`);
    }
    assert.equal(new CursorCodec(randomBytes(32), 'pets').decode(cursor), undefined);
    assert.equal(new CursorCodec(secret, 'orders').decode(cursor), undefined);
    assert.deepEqual(new CursorCodec(secret, 'pets').decode(cursor), { afterId: 1234, filter: 'pending' });
    for (const junk of ['', '.', 'a.b', 'a.b.c', '💥', cursor.replace('.', '')]) {
      assert.equal(codec.decode(junk), undefined, junk);
    }
  });
});

describe('pet name rule', () => {
  test('1 to 200 characters after trimming, counted in code points', () => {
    assert.equal(petNameProblem('a'), undefined);
    assert.equal(petNameProblem(` ${'x'.repeat(200)} `), undefined);
    assert.equal(petNameProblem('😀'.repeat(200)), undefined);
    assert.deepEqual(petNameProblem('x'.repeat(201)), { kind: 'too_long', chars: 201 });
    assert.deepEqual(petNameProblem('   '), { kind: 'blank' });
    assert.deepEqual(petNameProblem(''), { kind: 'blank' });
  });

  test('a name needs a visible character: invisible ones alone are blank', () => {
    for (const name of ['\u200b', '\u00ad', ' \u200c\u200d ', '\u2060', '\u3164', '\u180e', '\ufe0f', '\u{e0020}']) {
      assert.deepEqual(petNameProblem(name), { kind: 'blank' }, JSON.stringify(name));
    }
    for (const name of ['a\u200b', '\u00adb', '👩\u200d🚀', '\u05e8']) {
      assert.equal(petNameProblem(name), undefined, JSON.stringify(name));
    }
  });
});
