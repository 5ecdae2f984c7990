import { Redis } from 'ioredis';

/**
 * A private redis-server for the tests and the benchmark, and what it has done. No side effects on import
 * (see postgres-admin.ts for what dev/ is).
 */

/** redis-server's arguments for a throw-away server on 127.0.0.1:`port`: nothing saved to disk. */
export function redisServerArgs(port: number): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
}

/** Commands Redis has run, those run by scripts included, except the INFO that asks. */
export async function commandsRun(url: string): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true });
  try {
    await redis.connect();
    const stats = await redis.info('commandstats');
    let total = 0;
    for (const [, name, calls] of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      if (name !== 'info') total += Number(calls);
    }
    return total;
  } finally {
    redis.disconnect();
  }
}
