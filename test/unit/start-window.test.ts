import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COUNTED_WINDOW_MS, type StartLog, takeStarts } from '../../src/domain/start-window.js';

/** A repeatable sequence in [0, 1). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

test('takeStarts: no sliding window of 1.1 s holds more than the limit, however takes of many sizes come', () => {
  for (const limit of [1, 5, 37]) {
    const next = random(limit);
    let log: StartLog = [];
    const starts: number[] = [];
    let now = 1_000_000;
    for (let i = 0; i < 2000; i++) {
      now += Math.floor(next() * 120);
      // Now and then a take whose time is behind the last one logged: another instance's clock, a wait for
      // the lock (found wanting: a log kept one window only let 6 of 5 through).
      const at = next() < 0.1 ? now - Math.floor(next() * 300) : now;
      const taken = takeStarts(log, limit, 1 + Math.floor(next() * 2 * limit), at);
      log = taken.log;
      for (let n = 0; n < taken.grant.granted; n++) starts.push(taken.grant.at);
    }
    starts.sort((a, b) => a - b);
    let end = 0;
    for (let first = 0; first < starts.length; first++) {
      while (end < starts.length && (starts[end] as number) < (starts[first] as number) + COUNTED_WINDOW_MS) end++;
      assert.ok(end - first <= limit, `limit ${limit}: ${end - first} in the window from ${starts[first]}`);
    }
    // And it lets through what it may: about the limit a window over the run.
    const windows = (now - 1_000_000) / COUNTED_WINDOW_MS;
    assert.ok(starts.length >= 0.8 * limit * windows, `limit ${limit}: ${starts.length} in ${windows} windows`);
  }
});

test('takeStarts: a refused start is told when the log will let it start, and a take then is granted', () => {
  const first = takeStarts([], 4, 6, 10_000);
  const free = 10_000 + COUNTED_WINDOW_MS;
  assert.deepEqual([first.grant.granted, first.grant.at], [4, 10_000]);
  assert.deepEqual(first.grant.retryAt, [free, free]);
  const meanwhile = takeStarts(first.log, 4, 2, free - 1);
  assert.equal(meanwhile.grant.granted, 0);
  const then = takeStarts(first.log, 4, 2, first.grant.retryAt[0] as number);
  assert.equal(then.grant.granted, 2);
  assert.deepEqual(then.log, [
    [10_000, 4],
    [free, 2],
  ]);
  // Two windows on, the first grant is dropped: a take behind the newest no longer needs it.
  assert.deepEqual(takeStarts(then.log, 4, 0, 10_000 + 2 * COUNTED_WINDOW_MS).log, [[free, 2]]);
});

test('takeStarts: a lowered limit holds the starts already logged against the new one', () => {
  const logged = takeStarts([], 10, 10, 0).log;
  const lowered = takeStarts(logged, 3, 2, 500);
  assert.equal(lowered.grant.granted, 0);
  assert.ok((lowered.grant.retryAt[0] as number) >= COUNTED_WINDOW_MS);
});
