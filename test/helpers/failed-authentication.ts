import assert from 'node:assert/strict';

/** The failed-authentication limit: a burst of twenty, then one a second (docs/decisions/rate-limits.md). */
const BURST = 20;

/**
 * Sends `fail(i)` (the i-th failed authentication) until one is not a 401, and returns that answer. On a
 * loaded machine twenty requests can take over a second, so the refusal is awaited rather than expected
 * at the 21st: at least the burst must pass, and no more than the burst plus the refills of the time taken.
 */
export async function failUntilRefused<A extends { readonly status: number }>(
  fail: (i: number) => Promise<A>,
): Promise<A> {
  const started = Date.now();
  let failures = 0;
  let answer = await fail(0);
  while (answer.status === 401) {
    failures++;
    assert.ok(failures <= BURST + 1 + (Date.now() - started) / 1000, `${failures} failures let through`);
    answer = await fail(failures);
  }
  assert.ok(failures >= BURST, `refused after ${failures} failures`);
  return answer;
}
