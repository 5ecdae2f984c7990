/**
 * Instructions per request: the service run under valgrind's callgrind, which counts the instructions its
 * process executes. Unlike req/s or CPU time, that count does not move with what else the machine is doing
 * (on this shared 2-core VM those swing 5–10 % between runs), so a 3 % difference between two builds shows.
 *
 * Callgrind starts with instrumentation off (--instr-atstart=no): start-up, migrations and warm-up run
 * uncounted, and only the measured windows are counted, switched by `callgrind_control`. The load comes
 * from the bench's own process, outside valgrind, one request at a time, in the same order for every
 * build (a seeded random sequence), so each sample counts the same work.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Load, pick } from './load.js';
import { median } from './paired-ratios.js';
import { SERVICE_SETTINGS, type Service, type Wrapper } from './service.js';

export interface InstructionSettings {
  /** Samples per scenario; their median is what is compared. */
  readonly samples: number;
  readonly requestsPerSample: number;
  /** Requests sent uncounted before a scenario's first sample, so that V8 has compiled the hot code. */
  readonly warmupRequests: number;
}

/** One scenario's figures: each sample's instructions per request, their median, and the requests ≥ 400. */
export interface InstructionCount {
  readonly samples: readonly number[];
  readonly median: number;
  readonly errors: number;
}

export function valgrindInstalled(): boolean {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/**
 * V8 flags for a count that repeats, CodSpeed's for instrumented runs: fixed hash and random seeds; no
 * TurboFan (--no-opt), whose compilations went on for thousands of requests and were up to a third of a
 * window's instructions, landing in one window or another; --predictable (everything on the main
 * thread, no memory reducer) and --predictable-gc-schedule (fixed heap growth, no idle-time GC). The
 * count then measures the interpreter and Sparkplug's baseline code: a JavaScript change weighs more in
 * it than in production, so it decides whether a build does more work, not how much slower users find it.
 */
const NODE_FLAGS = [
  '--hash-seed=1',
  '--random-seed=1',
  '--no-opt',
  '--predictable',
  '--predictable-gc-schedule',
  '--no-minor-gc-task',
  '--no-concurrent-sweeping',
  '--expose-gc',
  '--max-old-space-size=4096',
] as const;

const PRELOAD = fileURLToPath(new URL('count-preload.cjs', import.meta.url));

/**
 * Valgrind as the service's wrapper: callgrind, counting off until switched on, its own log and dumps;
 * node with the flags above and count-preload.cjs, which holds the service's intervals off and collects
 * garbage when asked (acknowledging in `gcAckFile`).
 */
export function callgrindWrapper(dumpFile: string, logFile: string, gcAckFile: string): Wrapper {
  return {
    command: 'valgrind',
    args: ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${dumpFile}`, `--log-file=${logFile}`],
    nodeFlags: [...NODE_FLAGS, '--require', PRELOAD],
    env: { BENCH_GC_ACK: gcAckFile },
    // Node starts 20–50 times slower under valgrind, and both builds start at once: on a 2-core machine
    // loaded by other work (load average 20), a traced service was not ready within 3 minutes.
    startTimeoutMs: 900_000,
  };
}

/** A seeded pseudo-random sequence (mulberry32): every build gets the same ids and the same mix. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** One request of `load`, drawn with `random`; resolves to its status once the response has been read. */
function send(agent: Agent, origin: string, headers: Record<string, string>, load: Load, random: () => number) {
  const { request: template } = load.requests[pick(load, random())] ?? {};
  if (template === undefined) throw new Error('a load needs at least one request');
  const id = template.randomIdUpTo === undefined ? '' : String(1 + Math.floor(random() * template.randomIdUpTo));
  const json = template.body === undefined ? {} : { 'Content-Type': 'application/json' };
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(
      `${origin}${template.path}${id}`,
      { method: template.method, agent, headers: { ...headers, ...json } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(template.body);
  });
}

/**
 * Sends `count` requests one after the other on one keep-alive connection: one at a time, so that the
 * service does the same work per request whatever the timing (no batching of what arrives together).
 * Returns how many were answered 400 or more.
 */
export async function sendSequentially(
  origin: string,
  headers: Record<string, string>,
  load: Load,
  count: number,
  random: () => number,
): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    let errors = 0;
    for (let sent = 0; sent < count; sent++) {
      if ((await send(agent, origin, headers, load, random)) >= 400) errors += 1;
    }
    return errors;
  } finally {
    agent.destroy();
  }
}

const exec = promisify(execFile);

/**
 * `callgrind_control ARGS pid`: it reaches the process through valgrind's gdbserver (vgdb), whose pipes
 * are named after $USER and $HOST on each side: so it gets the service's HOST (service.ts sets it to the
 * address to listen on). It exits 0 even when it reached nothing, so its "OK." is checked.
 */
async function callgrindControl(pid: number, ...args: string[]): Promise<void> {
  const env = { ...process.env, HOST: SERVICE_SETTINGS.HOST };
  const { stdout, stderr } = await exec('callgrind_control', [...args, String(pid)], { env, timeout: 60_000 });
  if (!stdout.includes('OK.')) throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${stdout}${stderr}`);
}

/** The instructions a callgrind dump counted (its `totals:` line, all threads summed). */
/**
 * After/before of two builds' counts of a scenario: the median of sample i's after/before over every i.
 * Sample i of each build served the same requests in the same order, after the same ones.
 */
export function pairedRatio(before: InstructionCount, after: InstructionCount): number {
  return median(after.samples.map((count, index) => count / (before.samples[index] ?? Number.NaN)));
}

export function dumpTotal(text: string): number {
  const total = /^totals:\s+(\d+)/m.exec(text)?.[1] ?? /^summary:\s+(\d+)/m.exec(text)?.[1];
  if (total === undefined) throw new Error('the callgrind dump has no totals line');
  return Number(total);
}

/** The file of dump number `index` (from 1): callgrind appends the number to --callgrind-out-file. */
async function readDump(dumpFile: string, index: number): Promise<number> {
  const path = `${dumpFile}.${index}`;
  for (let waited = 0; !existsSync(path); waited += 100) {
    if (waited > 60_000) throw new Error(`callgrind wrote no ${path}`);
    await sleep(100);
  }
  return dumpTotal(readFileSync(path, 'utf8'));
}

/** A service under callgrindWrapper, and the dumps and collections asked of it so far. */
export interface CountedService {
  readonly service: Service;
  readonly headers: Record<string, string>;
  readonly dumpFile: string;
  readonly gcAckFile: string;
  dumps: number;
  collections: number;
}

/** An empty acknowledgement file for callgrindWrapper, made before the service starts. */
export function gcAckFileIn(path: string): string {
  writeFileSync(path, '');
  return path;
}

/** A full collection in the service (count-preload.cjs), returning once it has acknowledged it. */
async function collectGarbage(counted: CountedService): Promise<void> {
  counted.collections += 1;
  process.kill(counted.service.pid, 'SIGUSR2');
  for (let waited = 0; statSync(counted.gcAckFile).size < counted.collections; waited += 50) {
    if (waited > 60_000) throw new Error('the service did not acknowledge a garbage collection within 60 s');
    await sleep(50);
  }
}

/**
 * Counts `load` on `counted`: `warmupRequests` uncounted, then `samples` samples of `requestsPerSample`,
 * each a window of its own (a full collection uncounted, counting on, the requests, a dump, counting off).
 * A dump zeroes the counters, so each dump holds its window only. The window includes what the service
 * does after answering the last request (its log line, the response's end), since the dump is asked for
 * only after the response arrived.
 */
export async function countInstructions(
  counted: CountedService,
  load: Load,
  settings: InstructionSettings,
  seed: number,
): Promise<InstructionCount> {
  const { service, headers } = counted;
  const random = seededRandom(seed);
  let errors = await sendSequentially(service.origin, headers, load, settings.warmupRequests, random);
  const samples: number[] = [];
  for (let sample = 0; sample < settings.samples; sample++) {
    await collectGarbage(counted);
    await callgrindControl(service.pid, '--instr=on');
    errors += await sendSequentially(service.origin, headers, load, settings.requestsPerSample, random);
    await callgrindControl(service.pid, '--dump');
    await callgrindControl(service.pid, '--instr=off');
    counted.dumps += 1;
    samples.push((await readDump(counted.dumpFile, counted.dumps)) / settings.requestsPerSample);
  }
  return { samples, median: median(samples), errors };
}
