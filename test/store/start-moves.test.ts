import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import { COUNTED_WINDOW_MS } from '../../src/domain/start-window.js';
import { RedisStartLimiter } from '../../src/webhooks/redis-start-limiter.js';
import type { StartLimiter } from '../../src/webhooks/start-limiter.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { eachBackend } from '../helpers/stores.js';

const REDIS_URL = process.env.PETSTORE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A rate limit's batch whose requests were written late is counted from when they were (moveStarts), on
 * every limiter: the database's on both stores, and Redis's. Then the next window begins a window after the
 * writing, not after the grant; moved again, from where it was put; never earlier.
 */
async function movesTheBatch(limiter: StartLimiter, endpointId: number): Promise<void> {
  const grant = await limiter.take(endpointId, 3, 3);
  assert.equal(grant.granted, 3);
  const sent = grant.at + 400;
  await limiter.made(endpointId, grant, grant.at, sent);
  const refused = await limiter.take(endpointId, 3, 1);
  assert.equal(refused.granted, 0);
  assert.deepEqual(refused.retryAt, [sent + COUNTED_WINDOW_MS], 'free a window after it was sent');
  await limiter.made(endpointId, grant, sent, sent + 100);
  await limiter.made(endpointId, grant, sent + 100, sent - 300);
  assert.deepEqual((await limiter.take(endpointId, 3, 1)).retryAt, [sent + 100 + COUNTED_WINDOW_MS], 'never earlier');
}

eachBackend((backend) => {
  describe(`start moves [${backend.name}]`, () => {
    test('a batch sent late counts from when it was sent', async (t) => {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      const fields = { events: [...EVENT_TYPES], description: null, secret: 'whsec_c2VjcmV0', createdAt: new Date() };
      const { id } = await addEndpoint(fixture.store, { ...fields, url: 'https://hooks.example.com/in', rateLimit: 3 });
      await movesTheBatch(fixture.store.endpointStarts, id);
    });
  });
});

describe('start moves [redis]', () => {
  test('a batch sent late counts from when it was sent', async (t) => {
    const limiter = new RedisStartLimiter({ url: REDIS_URL, keyPrefix: `petstore-test:starts:${randomUUID()}:` });
    t.after(() => limiter.close());
    await movesTheBatch(limiter, 7);
  });
});
