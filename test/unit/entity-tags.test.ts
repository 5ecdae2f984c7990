import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ifMatchVersions, ifNoneMatchHits, strongTag } from '../../src/domain/entity-tags.js';

test('If-Match: absent or * asks nothing; strong tags name versions; weak and other tags match nothing', () => {
  assert.equal(ifMatchVersions(undefined), undefined);
  assert.equal(ifMatchVersions('*'), undefined);
  assert.equal(ifMatchVersions(' * '), undefined);
  assert.deepEqual(ifMatchVersions('"3"'), [3]);
  assert.deepEqual(ifMatchVersions('"3", "7" ,, "12"'), [3, 7, 12]);
  assert.deepEqual(ifMatchVersions('W/"3"'), [], 'a weak tag never matches under the strong comparison');
  assert.deepEqual(ifMatchVersions('W/"3", "4"'), [4]);
  for (const other of ['""', '"abc"', '"03"', '"-1"', '"1.5"', '"9999999999999999"', '', ' , '])
    assert.deepEqual(ifMatchVersions(other), [], other);
});

test('If-Match: neither * nor a list of entity tags is malformed, whatever else it holds', () => {
  for (const malformed of ['3', '"3', '"4", bad', '*, "3"', '"3" "4"', 'w/"3"', 'W/ "3"', "'3'", '"a b"'])
    assert.equal(ifMatchVersions(malformed), 'malformed', malformed);
});

test('If-None-Match: weak comparison of any listed tag, or *; a malformed field is ignored whole', () => {
  const tag = strongTag(5);
  assert.equal(tag, '"5"');
  assert.equal(ifNoneMatchHits(undefined, tag), false);
  assert.equal(ifNoneMatchHits('"5"', tag), true);
  assert.equal(ifNoneMatchHits('W/"5"', tag), true);
  assert.equal(ifNoneMatchHits('"4", W/"5"', tag), true);
  assert.equal(ifNoneMatchHits('*', tag), true);
  assert.equal(ifNoneMatchHits('"4"', tag), false);
  assert.equal(ifNoneMatchHits('5', tag), false);
  assert.equal(ifNoneMatchHits('*, "5"', tag), false, 'a * in a list is malformed');
  assert.equal(ifNoneMatchHits('"4", bad, W/"5"', tag), false, 'one element that is no tag');
  assert.equal(ifNoneMatchHits('W/"a1b2"', 'W/"a1b2"'), true);
});
