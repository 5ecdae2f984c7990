import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointSlots } from '../../src/webhooks/endpoint-slots.js';

const free = (slots: EndpointSlots, now = 0) => {
  const { free: byEndpoint, freeOtherwise } = slots.free(now);
  return { byEndpoint: Object.fromEntries(byEndpoint), freeOtherwise };
};

test("one owner's endpoints hold at most half of the trial slots; another owner's keep the rest", () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 10 });
  for (let endpoint = 1; endpoint <= 5; endpoint++) slots.begin(endpoint, 'acme', 0);
  const crowded = slots.free(0);
  assert.deepEqual(crowded.fullOwners, ['acme'], 'acme holds its half: 5 of 10');
  slots.end(1, true, 0);
  // Endpoint 1 may take two now, but acme's share has one left.
  assert.equal(crowded.free.get(1), 0);
  assert.equal(slots.free(0).free.get(1), 1, 'one of its own, within the share');
  assert.deepEqual(slots.free(0).fullOwners, []);
  slots.begin(1, 'acme', 0);
  for (let endpoint = 6; endpoint <= 10; endpoint++) slots.begin(endpoint, 'globex', 0);
  const both = slots.free(0);
  assert.deepEqual([...both.fullOwners].sort(), ['acme', 'globex']);
  assert.equal(both.freeOtherwise, 0, 'the trial slots are all taken');
  slots.end(6, false, 0);
  assert.equal(slots.free(0).free.get(6), 1, "globex's failing endpoint gets its slot back within its share");
  assert.deepEqual(slots.free(0).fullOwners, ['acme']);
});

test('an endpoint starts with one slot, doubles it with each success up to its share, halves it with each failure', () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 100 });
  assert.deepEqual(free(slots), { byEndpoint: {}, freeOtherwise: 1 });
  slots.begin(7, 'acme', 0);
  assert.deepEqual(free(slots).byEndpoint, { 7: 0 }, 'its one attempt is in flight');
  const limits: number[] = [];
  for (const delivered of [true, true, true, true, true, false, false, false, false, false, true]) {
    slots.end(7, delivered, 0);
    limits.push(free(slots).byEndpoint[7] as number);
    slots.begin(7, 'acme', 0);
  }
  assert.deepEqual(limits, [2, 4, 8, 16, 16, 8, 4, 2, 1, 1, 2]);
});

test('endpoints below their share hold at most the trial slots together; proven ones keep theirs', () => {
  const slots = new EndpointSlots({ perEndpoint: 4, trial: 3 });
  for (let i = 0; i < 2; i++) {
    slots.begin(1, 'acme', 0);
    slots.end(1, true, 0);
  }
  assert.deepEqual(free(slots).byEndpoint, { 1: 4 }, 'endpoint 1 proved itself');
  // Of three owners: one owner's hold half of the trial slots at most (its own test, above).
  for (const hanging of [10, 11, 12]) slots.begin(hanging, `owner-${hanging}`, 0);
  assert.deepEqual(free(slots), { byEndpoint: { 1: 4, 10: 0, 11: 0, 12: 0 }, freeOtherwise: 0 });
  slots.end(10, false, 0);
  assert.deepEqual(free(slots), { byEndpoint: { 1: 4, 10: 1, 11: 0, 12: 0 }, freeOtherwise: 1 });
});

test('an endpoint idle for a minute with nothing in flight is forgotten, and starts again from one slot', () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 100 });
  slots.begin(3, 'acme', 0);
  slots.end(3, true, 0);
  assert.deepEqual(free(slots, 60_000).byEndpoint, { 3: 2 });
  assert.deepEqual(free(slots, 60_001).byEndpoint, {});
  slots.begin(4, 'acme', 0);
  assert.deepEqual(free(slots, 120_000).byEndpoint, { 4: 0 }, 'one in flight is never forgotten');
});
