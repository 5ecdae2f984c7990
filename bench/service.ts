import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOCAL_SERVICE, serveEnv } from '../dev/petstore-cli.js';
import { spawnService } from '../dev/service-process.js';
import type { Cleanup } from './cleanup.js';
import { processTree } from './usage.js';

const START_TIMEOUT_MS = 30_000;

/** A program the service runs under (e.g. valgrind), with node flags of its own and more time to start. */
export interface Wrapper {
  readonly command: string;
  /** Its arguments, before node's command line. */
  readonly args: readonly string[];
  readonly nodeFlags: readonly string[];
  /** Settings added to the service's environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly startTimeoutMs: number;
}

/**
 * The production configuration, with two changes: the per-key rate limit is so high that the one benchmark
 * key is never refused, while every request still goes through the limiter (its cost is measured); and
 * webhooks may go to the bench's receiver over http://127.0.0.1 (each attempt is checked all the same).
 */
export const SERVICE_SETTINGS = {
  ...LOCAL_SERVICE,
  RATE_LIMIT_RPS: '1000000',
  RATE_LIMIT_BURST: '1000000',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
} as const;

/** Settings of the caller's shell that would change what is measured, so the service never gets them. */
const UNSET = [
  'NODE_OPTIONS',
  'PUBLIC_URL',
  'REDIS_URL',
  'TLS_CERT',
  'TLS_KEY',
  'DATABASE_POOL_SIZE',
  'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_RETRY_SCHEDULE',
];

/** The service's environment: the settings above, on `databaseUrl`, with Redis at `redisUrl` if given. */
export function serviceEnv(databaseUrl: string, redisUrl?: string): NodeJS.ProcessEnv {
  return serveEnv(
    databaseUrl,
    { ...SERVICE_SETTINGS, ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }) },
    UNSET,
  );
}

interface RequestLog {
  readonly lines: number;
  readonly errorStatuses: Record<string, number>;
  /** Responses 201: the creates that succeeded. */
  readonly created: number;
}

/** How long the log must hold still to count as written out, and how long to wait for that at most. */
const LOG_STILL_MS = 300;
const LOG_SETTLE_TIMEOUT_MS = 10_000;

export interface Service {
  /** The process started: the service's, or the wrapper's (valgrind runs the service in its own process). */
  readonly pid: number;
  /** The service's processes: the one, or the primary and its workers. */
  processes(): number[];
  /** e.g. http://127.0.0.1:43210 */
  readonly origin: string;
  /**
   * Bytes logged so far, once the service has written out what it buffered (the size held still for a
   * moment): marks where a scenario's requests start and end in the log.
   */
  settledLogSize(): Promise<number>;
  /** The request log lines between two marks: how many, the responses of 400 or more by status, the 201s. */
  requestLog(from: number, to: number): Promise<RequestLog>;
  /** Log lines the service has dropped so far, from its own count in /metrics. */
  droppedLogLines(): Promise<number>;
  /** Webhook deliveries not yet sent (successfully or finally), from its /metrics. */
  pendingDeliveries(): Promise<number>;
  stop(): Promise<void>;
}

/** A metric without labels, as the service's /metrics shows it now. */
async function metric(origin: string, name: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const value = new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1];
  if (value === undefined) throw new Error(`/metrics has no ${name}`);
  return Number(value);
}

/**
 * Starts `petstore serve` (`--workers N` when `workers` is above 1; the build at `cli`, the working tree's
 * by default; under `wrapper` if given) with its output in a file (a pipe the bench failed to drain would
 * slow it down).
 */
export async function startService(
  env: NodeJS.ProcessEnv,
  logPath: string,
  cleanup: Cleanup,
  {
    cpuProfDir,
    workers,
    cli,
    wrapper,
  }: { cpuProfDir: string | undefined; workers: number; cli?: string | undefined; wrapper?: Wrapper | undefined },
): Promise<Service> {
  // The profile is written when the process exits, which the graceful stop below lets it do.
  const profile = cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
  const service = spawnService({
    env: { ...env, ...wrapper?.env },
    args: workers > 1 ? ['--workers', String(workers)] : [],
    cli,
    nodeFlags: [...(wrapper?.nodeFlags ?? []), ...profile],
    wrapper,
    logFile: logPath,
  });
  const stop = cleanup.defer('the service', async () => {
    const exit = await service.stop();
    if (exit.code !== 0) process.stderr.write(`bench: the service exited with ${JSON.stringify(exit)}\n`);
  });
  const { pid } = service.child;
  if (pid === undefined) throw new Error(`could not start ${cli ?? 'the service'}`);

  const origin = await service.ready(wrapper?.startTimeoutMs ?? START_TIMEOUT_MS);
  return {
    pid,
    processes: () => processTree(pid),
    origin,
    async settledLogSize() {
      const deadline = Date.now() + LOG_SETTLE_TIMEOUT_MS;
      let size = statSync(logPath).size;
      for (;;) {
        await sleep(LOG_STILL_MS);
        const now = statSync(logPath).size;
        if (now === size) return now;
        if (Date.now() > deadline) {
          throw new Error(`the service's log was still growing ${LOG_SETTLE_TIMEOUT_MS} ms after the load stopped`);
        }
        size = now;
      }
    },
    droppedLogLines: () => metric(origin, 'petstore_log_lines_dropped_total'),
    pendingDeliveries: () => metric(origin, 'petstore_webhook_pending_deliveries'),
    async requestLog(from, to) {
      const errorStatuses: Record<string, number> = {};
      let count = 0;
      let created = 0;
      if (to <= from) return { lines: 0, errorStatuses, created };
      const lines = createInterface({ input: createReadStream(logPath, { start: from, end: to - 1 }) });
      for await (const line of lines) {
        if (!line.includes('"msg":"request"')) continue;
        count += 1;
        const status = /"status":(\d{3})[,}]/.exec(line)?.[1];
        if (status !== undefined && Number(status) >= 400) errorStatuses[status] = (errorStatuses[status] ?? 0) + 1;
        if (status === '201') created += 1;
      }
      return { lines: count, errorStatuses, created };
    },
    stop,
  };
}
