import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeliveryPace, watchEventLoop } from '../../src/webhooks/delivery-pace.js';

const bounds = { floor: 10, ceiling: 1000 };

describe('DeliveryPace', () => {
  test('an idle process starts unpaced: the allowance is the ceiling', () => {
    assert.equal(new DeliveryPace(bounds).allowance, 1000);
  });

  test('busy windows halve what was started, down to the floor and never below it', () => {
    const pace = new DeliveryPace(bounds);
    // Halves the attempts actually started, not an allowance that went unused.
    assert.equal(pace.observe(0.8, 160, 1), 80);
    assert.equal(pace.observe(1, 80, 1), 40);
    assert.equal(pace.observe(1, 40, 1), 20);
    assert.equal(pace.observe(0.75, 20, 1), 10);
    assert.equal(pace.observe(1, 10, 1), 10);
    // Nothing started (nothing due) while busy: the floor, so a burst of due work starts paced.
    assert.equal(new DeliveryPace(bounds).observe(1, 0, 1), 10);
  });

  test('however long the loop stays busy, deliveries still get the floor', () => {
    const pace = new DeliveryPace(bounds);
    for (let window = 0; window < 1000; window++) pace.observe(1, pace.allowance, 1);
    assert.equal(pace.allowance, 10);
  });

  test('windows with room double the allowance up to the ceiling', () => {
    const pace = new DeliveryPace(bounds);
    pace.observe(1, 0, 1);
    const grown = [0.4, 0.1, 0, 0.49, 0.3, 0.2, 0.1, 0].map((utilization) => pace.observe(utilization, 5, 1));
    assert.deepEqual(grown, [20, 40, 80, 160, 320, 640, 1000, 1000]);
  });

  test('a busy window in which the API answered nothing is room: the loop was busy with deliveries alone', () => {
    const pace = new DeliveryPace(bounds);
    assert.equal(pace.observe(1, 160, 1), 80);
    assert.equal(pace.observe(1, 80, 0), 160);
    assert.equal(pace.observe(0.6, 80, 0), 320);
  });

  test('in between busy and roomy, the allowance holds', () => {
    const pace = new DeliveryPace(bounds);
    pace.observe(1, 40, 1);
    assert.equal(pace.allowance, 20);
    assert.equal(pace.observe(0.5, 20, 1), 20);
    assert.equal(pace.observe(0.74, 3, 1), 20);
  });
});

describe('watchEventLoop', () => {
  test('reports a window the loop spent running code as busy, and one spent waiting as idle', async () => {
    const seen: number[] = [];
    const stop = watchEventLoop(50, (utilization) => seen.push(utilization));
    try {
      // No timer fires during the spin: the first window reported covers it.
      const until = Date.now() + 300;
      while (Date.now() < until);
      while (seen.length === 0) await sleep(10);
      const busy = seen[0] ?? 0;
      assert.ok(busy >= 0.9, `a window of spinning reported as ${busy} busy`);
      seen.length = 0;
      await sleep(300);
      const idle = Math.min(...seen);
      assert.ok(idle < 0.5, `windows of waiting reported as at least ${idle} busy`);
    } finally {
      stop();
    }
  });
});
