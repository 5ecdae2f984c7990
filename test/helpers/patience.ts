/**
 * Test files run TEST_CONCURRENCY at once (4 by default, `npm run test:files`; the waits were set at 8, so
 * they hold at 4 with room). Whoever sets it below 8 is on a
 * slower or busier machine, where a spawned process also takes longer to start: waits for one to be ready
 * grow in proportion (30 s at 8 files at once is 60 s at 4), and never shrink below the default.
 */
const DEFAULT_CONCURRENCY = 8;
const concurrency = Number(process.env.TEST_CONCURRENCY ?? DEFAULT_CONCURRENCY);
const SCALE = concurrency >= 1 && concurrency < DEFAULT_CONCURRENCY ? DEFAULT_CONCURRENCY / concurrency : 1;

/** How long to wait for a process to be ready, for a wait of `ms` at the default concurrency. */
export function readyWithin(ms: number): number {
  return Math.round(ms * SCALE);
}
