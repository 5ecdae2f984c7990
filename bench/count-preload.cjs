'use strict';
/**
 * Loaded (node --require) into a service whose instructions the bench counts (instructions.ts), whatever
 * revision it serves. It takes out the two kinds of work that come with time rather than with requests,
 * and would otherwise land in a counted window or not, more of them the slower the machine:
 *
 * - Intervals (the webhook dispatcher's 500 ms poll and 100 ms pace window, the WAL check, the purge) are
 *   held off for good: the count asks what a request costs, and the bench sends no webhook work. Timeouts
 *   are left alone, since requests start them.
 * - Garbage: SIGUSR2 runs a full collection (node --expose-gc) and then appends a byte to the file named
 *   by BENCH_GC_ACK, so each window starts on an empty young generation and its collections fall at the
 *   same requests in every run.
 */
const { appendFileSync } = require('node:fs');
const timers = require('node:timers');

const HELD_MS = 2 ** 31 - 1;
const setIntervalAsMade = timers.setInterval;
function heldInterval(callback, _ms, ...args) {
  return setIntervalAsMade(callback, HELD_MS, ...args);
}
timers.setInterval = heldInterval;
globalThis.setInterval = heldInterval;

const ack = process.env.BENCH_GC_ACK;
if (ack === undefined) throw new Error('count-preload needs BENCH_GC_ACK');
process.on('SIGUSR2', () => {
  globalThis.gc();
  appendFileSync(ack, '.');
});
