import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedTokenRead } from '../../src/store/shared/shared-token-read.js';

test('one read answers the callers of one turn; a caller that asks during a read gets the next one', async () => {
  let reads = 0;
  let finish: (() => void) | undefined;
  const tokens = new SharedTokenRead(async () => {
    reads += 1;
    const token = `t${reads}`;
    await new Promise<void>((resolve) => {
      finish = resolve;
    });
    return token;
  });
  const turn = Array.from({ length: 50 }, () => tokens.read());
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(reads, 1, 'the 50 callers of the turn share a read, started after they all asked');
  const late = tokens.read();
  finish?.();
  assert.deepEqual(new Set(await Promise.all(turn)), new Set(['t1']));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(reads, 2, 'the caller that asked during the first read waits for a second');
  finish?.();
  assert.equal(await late, 't2');
});

test('a failed read fails its callers only; the next caller reads again', async () => {
  let reads = 0;
  const tokens = new SharedTokenRead(() => {
    reads += 1;
    if (reads === 1) throw new Error('database unavailable');
    return 'ok';
  });
  const failed = await Promise.allSettled([tokens.read(), tokens.read()]);
  assert.deepEqual(
    failed.map((result) => result.status),
    ['rejected', 'rejected'],
  );
  assert.equal(await tokens.read(), 'ok');
});
