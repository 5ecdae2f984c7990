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
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
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
 * V8 flags for a count that repeats. --predictable runs V8 single-threaded (no concurrent compilation,
 * marking or sweeping on helper threads, whose work callgrind would count in whichever sample it fell
 * into) and turns off the memory reducer (GCs on a timer, which under valgrind's slowness would come
 * every few requests). Measured on SQLite list-20 after 2,000 uncounted requests, 5 samples of 200:
 * no flag 0.65–1.44 M instructions per request, --single-threaded 0.58–1.44 M, --single-threaded
 * --no-memory-reducer 0.55–1.08 M, --predictable 0.75–1.07 M; --no-opt does not help (0.81–1.51 M).
 */
export const NODE_FLAGS = ['--predictable'] as const;

/** Valgrind as the service's wrapper: callgrind, counting off until switched on, its own log and dumps. */
export function callgrindWrapper(dumpFile: string, logFile: string): Wrapper {
  return {
    command: 'valgrind',
    args: ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${dumpFile}`, `--log-file=${logFile}`],
    nodeFlags: NODE_FLAGS,
    // Node starts 20–50 times slower under valgrind.
    startTimeoutMs: 180_000,
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

/** A service under callgrindWrapper, and the dumps asked of it so far. */
export interface CountedService {
  readonly service: Service;
  readonly headers: Record<string, string>;
  readonly dumpFile: string;
  dumps: number;
}

/**
 * Counts `load` on `counted`: `warmupRequests` uncounted, then `samples` samples of `requestsPerSample`,
 * each a window of its own (counting on, the requests, a dump, counting off). A dump zeroes the counters,
 * so each dump holds its window only. The window includes what the service does after answering the last
 * request (its log line, the response's end), since the dump is asked for only after the response arrived.
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
    await callgrindControl(service.pid, '--instr=on');
    errors += await sendSequentially(service.origin, headers, load, settings.requestsPerSample, random);
    await callgrindControl(service.pid, '--dump');
    await callgrindControl(service.pid, '--instr=off');
    counted.dumps += 1;
    samples.push((await readDump(counted.dumpFile, counted.dumps)) / settings.requestsPerSample);
  }
  return { samples, median: median(samples), errors };
}
