import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Rate } from '../../src/domain/token-bucket.js';
import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import type { Decision } from '../../src/rate-limit/rate-limiter.js';
import { redisLimiter } from '../helpers/redis.js';

/**
 * Clock times in steps of 1/1024 s and whole-number rates and bursts: every sum and product the formula
 * makes is then exact, so the memory limiter, a lease and the Lua script, each computing it its own way
 * (from its own last update), agree to the bit, not only to a rounding.
 */
const STEP_MS = 1000 / 1024;

/**
 * Rates whose lease is one token (RPS × 0.25 s < 2, or a burst < 20: docs/decisions/rate-limit-leases.md). A larger lease
 * holds tokens here for later, which is where, by design, the Redis limiter answers other than one bucket.
 */
const rates: fc.Arbitrary<Rate> = fc.oneof(
  fc.record({ perSecond: fc.integer({ min: 1, max: 7 }), burst: fc.integer({ min: 1, max: 60 }) }),
  fc.record({ perSecond: fc.integer({ min: 1, max: 100 }), burst: fc.integer({ min: 1, max: 19 }) }),
);

/** The steps before each take: often none (takes at one instant), a few (a dry bucket), up to 4 s. */
const gaps = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 4096 })), {
  minLength: 1,
  maxLength: 30,
});

describe('one token-bucket formula', () => {
  test('the Redis limiter and the memory limiter: the same takes at the same times, the same answers', async (t) => {
    // From a time of today's size (in seconds since 1970): the script must keep it, and the tokens, exactly.
    let steps = 1_700_000_000 * 1024;
    const clockMs = () => steps * STEP_MS;
    const memory = new MemoryRateLimiter(() => clockMs() / 1000);
    const redis = redisLimiter(t, `formula:${randomBytes(4).toString('hex')}:`, undefined, clockMs);
    await redis.ready();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(rates, gaps, async (rate, gaps) => {
        const bucket = `run-${run++}`;
        const answers: Record<'memory' | 'redis', Decision[]> = { memory: [], redis: [] };
        for (const gap of gaps) {
          steps += gap;
          answers.memory.push(await memory.take(bucket, rate, 1));
          answers.redis.push(await redis.take(bucket, rate, 1));
        }
        assert.deepEqual(answers.redis, answers.memory);
      }),
      { numRuns: 100 },
    );
  });
});
