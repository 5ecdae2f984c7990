import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { stopChild } from '../dev/child-exit.js';
import { commandsRun, redisServerArgs } from '../dev/redis-admin.js';
import type { Cleanup } from './cleanup.js';
import { measureUsage } from './usage.js';

/** What Redis did while a scenario was measured. */
export interface RedisFigures {
  /** Commands run (those of scripts included), from INFO commandstats before and after. */
  readonly commands: number;
  /** redis-server's CPU time over wall time: 100 = one core busy. */
  readonly cpuPercent: number;
}

export interface BenchRedis {
  /** REDIS_URL for the service. */
  readonly url: string;
  readonly version: string;
  /** Runs `work` and counts what Redis did meanwhile. */
  during<T>(work: () => Promise<T>): Promise<{ result: T; redis: RedisFigures }>;
}

const START_TIMEOUT_MS = 10_000;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A redis-server of the bench's own on a free port, nothing saved, stopped at cleanup. */
export async function startRedis(cleanup: Cleanup): Promise<BenchRedis> {
  const port = await freePort();
  const child = spawn('redis-server', redisServerArgs(port), { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanup.defer('redis-server', () => stopChild(child, 'SIGTERM', 5000).then(() => undefined));
  const pid = child.pid;
  const ready = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server was not ready:\n${output}`)), START_TIMEOUT_MS);
    child.once('error', (error) => reject(new Error(`redis-server could not start (${error.message})`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
  });
  if (pid === undefined) throw new Error('redis-server has no pid');
  const url = `redis://127.0.0.1:${port}`;
  return {
    url,
    version: /Redis version=([^,\s]+)/.exec(ready)?.[1] ?? 'unknown',
    async during(work) {
      const before = await commandsRun(url);
      const { result, usage } = await measureUsage([pid], work);
      return { result, redis: { commands: (await commandsRun(url)) - before, cpuPercent: usage.cpuPercent } };
    },
  };
}
