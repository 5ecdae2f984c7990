import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, createReadStream, openSync, readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { running, stopChild } from './children.js';
import type { Cleanup } from './cleanup.js';
import { processTree } from './usage.js';

/** The working tree's build; a side-by-side run also serves another revision's. */
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;
const READY = /"msg":"ready"/;
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
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
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
  const env: NodeJS.ProcessEnv = { ...process.env, ...SERVICE_SETTINGS, PORT: '0', DATABASE_URL: databaseUrl };
  for (const name of UNSET) {
    delete env[name];
  }
  if (redisUrl !== undefined) env.REDIS_URL = redisUrl;
  return env;
}

/** Runs `petstore ...args` (the build at `cli`) to completion; returns its stdout. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv, cli = CLI): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args], { env, timeout: 60_000 });
    return stdout;
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`petstore ${args.join(' ')} failed: ${stderr?.trim() || (error as Error).message}`);
  }
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

function logTail(path: string): string {
  return readFileSync(path, 'utf8').slice(-4000);
}

/** The origin the service listens on, once it has logged that it is ready. */
async function untilReady(child: ChildProcess, logPath: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = readFileSync(logPath, 'utf8');
    const origin = READY.test(text) ? LISTENING.exec(text)?.[1] : undefined;
    if (origin !== undefined) return origin;
    if (!running(child)) throw new Error(`the service exited before it was ready:\n${logTail(logPath)}`);
    if (Date.now() > deadline) {
      throw new Error(`the service was not ready within ${timeoutMs} ms:\n${logTail(logPath)}`);
    }
    await sleep(50);
  }
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
    cli = CLI,
    wrapper,
  }: { cpuProfDir: string | undefined; workers: number; cli?: string | undefined; wrapper?: Wrapper | undefined },
): Promise<Service> {
  const log = openSync(logPath, 'a');
  // The profile is written when the process exits, which the graceful stop below lets it do.
  const profile = cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
  const serve = ['serve', ...(workers > 1 ? ['--workers', String(workers)] : [])];
  const node = [...(wrapper?.nodeFlags ?? []), ...profile, cli, ...serve];
  const [command, args] =
    wrapper === undefined ? [process.execPath, node] : [wrapper.command, [...wrapper.args, process.execPath, ...node]];
  const child = spawn(command, args, { env: { ...env, ...wrapper?.env }, stdio: ['ignore', log, log] });
  closeSync(log);
  const stop = cleanup.defer('the service', async () => {
    const exit = await stopChild(child, 'SIGTERM', 15_000);
    if (exit.code !== 0) process.stderr.write(`bench: the service exited with ${JSON.stringify(exit)}\n`);
  });
  const { pid } = child;
  if (pid === undefined) throw new Error(`could not start ${cli}`);

  const origin = await untilReady(child, logPath, wrapper?.startTimeoutMs ?? START_TIMEOUT_MS);
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
