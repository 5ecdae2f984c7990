import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ifMatchVersions, ifNoneMatchHits, strongTag } from '../../src/domain/entity-tags.js';

test('If-Match: absent or * asks nothing; strong tags name versions; weak or malformed ones match nothing', () => {
  assert.equal(ifMatchVersions(undefined), undefined);
  assert.equal(ifMatchVersions('*'), undefined);
  assert.equal(ifMatchVersions(' * '), undefined);
  assert.deepEqual(ifMatchVersions('"3"'), [3]);
  assert.deepEqual(ifMatchVersions('"3", "7" ,, "12"'), [3, 7, 12]);
  assert.deepEqual(ifMatchVersions('W/"3"'), [], 'a weak tag never matches under the strong comparison');
  assert.deepEqual(ifMatchVersions('W/"3", "4"'), [4]);
  assert.deepEqual(ifMatchVersions('"4", bad'), [], 'one element that is no tag makes the field unreadable');
  for (const malformed of ['3', '"3', '""', '"abc"', '"03"', '"-1"', '"1.5"', '*, "3"', '"9999999999999999"', ''])
    assert.deepEqual(ifMatchVersions(malformed), [], malformed);
});

test('If-None-Match: weak comparison of any listed tag, or *; malformed names nothing', () => {
  const tag = strongTag(5);
  assert.equal(tag, '"5"');
  assert.equal(ifNoneMatchHits(undefined, tag), false);
  assert.equal(ifNoneMatchHits('"5"', tag), true);
  assert.equal(ifNoneMatchHits('W/"5"', tag), true);
  assert.equal(ifNoneMatchHits('"4", W/"5"', tag), true);
  assert.equal(ifNoneMatchHits('*', tag), true);
  assert.equal(ifNoneMatchHits('"4"', tag), false);
  assert.equal(ifNoneMatchHits('5', tag), false);
  assert.equal(ifNoneMatchHits('W/"a1b2"', 'W/"a1b2"'), true);
});
