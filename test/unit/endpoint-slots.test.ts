import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointSlots } from '../../src/webhooks/endpoint-slots.js';

const free = (slots: EndpointSlots, now = 0) => {
  const { free: byEndpoint, freeOtherwise } = slots.free(now);
  return { byEndpoint: Object.fromEntries(byEndpoint), freeOtherwise };
};

/** An attempt to `endpoint` that begins and fails at once (its first), then one more that begins: on trial. */
const onTrial = (slots: EndpointSlots, endpoint: number, owner: string, now = 0) => {
  slots.begin(endpoint, owner, now);
  slots.end(endpoint, false, now);
  slots.begin(endpoint, owner, now);
};

test("an endpoint's first attempt takes no trial slot, nor its owner's share; its next ones do while young", () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 10, hanging: 100, slowMs: 500 });
  for (let endpoint = 1; endpoint <= 20; endpoint++) assert.equal(slots.begin(endpoint, 'acme', 0), true);
  const first = slots.free(0);
  assert.equal(first.freeOtherwise, 1, '20 first attempts, and a new endpoint still starts at once');
  assert.deepEqual(first.fullOwners, []);
  for (let endpoint = 1; endpoint <= 20; endpoint++) slots.end(endpoint, false, 0);
  for (let endpoint = 1; endpoint <= 5; endpoint++) assert.equal(slots.begin(endpoint, 'acme', 0), false);
  assert.deepEqual(slots.free(0).fullOwners, ['acme'], 'their second attempts hold their half: 5 of 10');
  assert.deepEqual(slots.free(500).fullOwners, [], 'until they wait past slowMs');
});

test("one owner's endpoints hold at most half of the trial slots; another owner's keep the rest", () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 10, hanging: 10, slowMs: 500 });
  for (let endpoint = 1; endpoint <= 5; endpoint++) onTrial(slots, endpoint, 'acme');
  const crowded = slots.free(0);
  assert.deepEqual(crowded.fullOwners, ['acme'], 'acme holds its half: 5 of 10');
  slots.end(1, true, 0);
  // Endpoint 1 may take two now, but acme's share has one left.
  assert.equal(crowded.free.get(1), 0);
  assert.equal(slots.free(0).free.get(1), 1, 'one of its own, within the share');
  assert.deepEqual(slots.free(0).fullOwners, []);
  slots.begin(1, 'acme', 0);
  for (let endpoint = 6; endpoint <= 10; endpoint++) onTrial(slots, endpoint, 'globex');
  const both = slots.free(0);
  assert.deepEqual([...both.fullOwners].sort(), ['acme', 'globex']);
  assert.equal(both.freeOtherwise, 0, 'the trial slots are all taken');
  slots.end(6, false, 0);
  assert.equal(slots.free(0).free.get(6), 1, "globex's failing endpoint gets its slot back within its share");
  assert.deepEqual(slots.free(0).fullOwners, ['acme']);
});

test('an endpoint starts with one slot, doubles it with each success up to its share, halves it with each failure', () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 100, hanging: 100, slowMs: 500 });
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
  const slots = new EndpointSlots({ perEndpoint: 4, trial: 3, hanging: 3, slowMs: 500 });
  for (let i = 0; i < 2; i++) {
    slots.begin(1, 'acme', 0);
    slots.end(1, true, 0);
  }
  assert.deepEqual(free(slots).byEndpoint, { 1: 4 }, 'endpoint 1 proved itself');
  // Of three owners: one owner's hold half of the trial slots at most (its own test, above).
  for (const hanging of [10, 11, 12]) onTrial(slots, hanging, `owner-${hanging}`);
  assert.deepEqual(free(slots), { byEndpoint: { 1: 4, 10: 0, 11: 0, 12: 0 }, freeOtherwise: 0 });
  slots.end(10, false, 0);
  assert.deepEqual(free(slots), { byEndpoint: { 1: 4, 10: 1, 11: 0, 12: 0 }, freeOtherwise: 1 });
});

test('an endpoint idle for a minute with nothing in flight is forgotten, and starts again from one slot', () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 100, hanging: 100, slowMs: 500 });
  slots.begin(3, 'acme', 0);
  slots.end(3, true, 0);
  assert.deepEqual(free(slots, 60_000).byEndpoint, { 3: 2 });
  assert.deepEqual(free(slots, 60_001).byEndpoint, {});
  slots.begin(4, 'acme', 0);
  assert.deepEqual(free(slots, 120_000).byEndpoint, { 4: 0 }, 'one in flight is never forgotten');
});

test('a crowd that never answers leaves the trial slots once its attempts wait past slowMs; the circuit opens', () => {
  const slots = new EndpointSlots({ perEndpoint: 16, trial: 100, hanging: 200, slowMs: 500 });
  // 300 endpoints, each of its own owner (the half per owner is its own test), all begin at once, each
  // after a first attempt that failed at once (a first attempt takes no trial slot: its own test).
  for (let endpoint = 1; endpoint <= 300; endpoint++) onTrial(slots, endpoint, `o${endpoint}`);
  assert.equal(slots.free(0).freeOtherwise, 0, 'young, they hold every trial slot');
  const later = slots.free(600);
  assert.equal(later.freeOtherwise, 1, 'waiting past slowMs, they hold none: a new endpoint starts at once');
  assert.equal(later.free.get(1), 0, 'each still has its one attempt in flight');
  // Their attempts time out: each failed slowly. 300 hanging is past the bound: circuits open for those known to hang.
  for (let endpoint = 1; endpoint <= 150; endpoint++) slots.end(endpoint, false, 10_000);
  const open = slots.free(10_000);
  assert.equal(open.free.get(1), 0, 'it failed slowly: not among the endpoints that answer');
  assert.equal(open.probes.get(1), 1, '150 still hang, under the bound of 200: a probe each, claimed after the others');
  slots.begin(999, 'new', 10_000);
  for (let endpoint = 1; endpoint <= 60; endpoint++) slots.begin(endpoint, `o${endpoint}`, 10_000);
  const full = slots.free(10_600);
  assert.equal(full.free.get(61), 0, 'past the bound, an endpoint that failed slowly waits');
  assert.equal(full.probes.get(61), undefined, 'no probe either: the circuit is open');
  assert.equal(full.freeOtherwise, 1, 'one never seen still starts');
  slots.end(999, true, 10_601);
  assert.equal(slots.free(10_601).free.get(999), 2, 'and one that answers grows its share');
});

test('an endpoint is proven at its full share while nothing of it hangs; open() is what its own limit leaves', () => {
  const slots = new EndpointSlots({ perEndpoint: 4, trial: 10, hanging: 10, slowMs: 500 });
  assert.equal(slots.open(1), 1, 'not seen yet: its first attempt');
  assert.equal(slots.proven(1, 0), false);
  for (let i = 0; i < 2; i++) {
    slots.begin(1, 'acme', 0);
    slots.end(1, true, 0);
  }
  assert.equal(slots.proven(1, 0), true, 'two successes: 1, 2, then 4 in flight');
  slots.begin(1, 'acme', 0);
  assert.equal(slots.open(1), 3);
  assert.equal(slots.proven(1, 499), true);
  assert.equal(slots.proven(1, 500), false, 'an attempt waits past slowMs: it may hang');
  slots.end(1, false, 600);
  assert.equal(slots.proven(1, 600), false, 'failed slowly, and below its share');
  assert.equal(slots.open(1), 2);
});
