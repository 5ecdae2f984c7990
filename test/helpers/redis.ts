import { type ChildProcess, spawn } from 'node:child_process';
import type { TestContext } from 'node:test';
import { redisServerArgs } from '../../dev/redis-admin.js';
import type { RateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { RedisRateLimiter } from '../../src/rate-limit/redis-rate-limiter.js';
import { sparePort } from './pg-cluster.js';

export { commandsRun } from '../../dev/redis-admin.js';

/** The Redis the tests share; each test keeps to a key prefix of its own. */
const REDIS_URL = process.env.PETSTORE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A Redis limiter in a namespace of its own, closed after the test; on `clock` (ms) when one is given. */
export function redisLimiter(t: TestContext, prefix: string, url = REDIS_URL, clock?: () => number): RateLimiter {
  const limiter = new RedisRateLimiter({ url, prefix, clock });
  t.after(() => limiter.close());
  return limiter;
}

/** A redis-server of the test's own (it is killed, paused, restarted), killed after the test. */
export async function privateRedis(t: TestContext) {
  const port = await sparePort();
  const spawnRedis = (): ChildProcess => spawn('redis-server', redisServerArgs(port), { stdio: 'ignore' });
  const redis = {
    url: `redis://127.0.0.1:${port}`,
    process: spawnRedis(),
    start() {
      redis.process = spawnRedis();
    },
    async kill() {
      const exited = new Promise((resolve) => redis.process.once('exit', resolve));
      redis.process.kill('SIGKILL');
      await exited;
    },
  };
  // SIGKILL ends a stopped process too.
  t.after(() => redis.process.kill('SIGKILL'));
  return redis;
}
