import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Exit, stopChild } from '../dev/child-exit.js';
import type { Cleanup } from './cleanup.js';
import {
  fixedRequest,
  type Load,
  type LoadGenerator,
  loadGenerator,
  REQUEST_TIMEOUT_SECONDS,
  type RequestTemplate,
  requestHeaders,
  timedApart,
} from './load.js';

/** Prefixes the JSON line the script's done() hook prints, to find it among wrk's own output. */
const MARKER = 'BENCH_RESULT ';

export function wrkInstalled(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

function wrkVersion(): string {
  // `wrk --version` prints its banner and exits 1.
  const banner = spawnSync('wrk', ['--version'], { encoding: 'utf8' }).stdout;
  return /^wrk (\S+)/.exec(banner)?.[1] ?? 'unknown version';
}

/** A Lua string literal. JSON escapes are Lua escapes for printable ASCII, which is all the bench sends. */
function lua(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`wrk script: only printable ASCII is supported, got ${text}`);
  return JSON.stringify(text);
}

function luaHeaders(request: RequestTemplate, headers: Readonly<Record<string, string>>): string {
  return `{ ${Object.entries(requestHeaders(request, headers))
    .map(([name, value]) => `[${lua(name)}] = ${lua(value)}`)
    .join(', ')} }`;
}

/** Microseconds on CLOCK_MONOTONIC, through LuaJIT's FFI (wrk's Lua is LuaJIT). */
const LUA_MICROS = `local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *now);
]]
local clock = ffi.new("bench_timespec")
local function micros()
  ffi.C.clock_gettime(1, clock)
  return tonumber(clock.tv_sec) * 1000000 + math.floor(tonumber(clock.tv_nsec) / 1000)
end`;

/**
 * The request part of the script. One fixed request is set on `wrk` itself, which wrk builds once; a mix or
 * random ids need a request() function, which wrk calls for every request (slower, so only then). A load
 * of several kinds of request (the mix) also times each kind apart, which wrk cannot: each request carries
 * its kind and send time in X-Request-Id, which the service echoes, and response() writes the kind and the
 * latency in µs to `samplesPath` (flushed when wrk exits).
 */
function requestScript(load: Load, headers: Readonly<Record<string, string>>, samplesPath: string): string {
  const fixed = fixedRequest(load);
  if (fixed !== undefined) {
    return [
      `wrk.method = ${lua(fixed.method)}`,
      `wrk.path = ${lua(fixed.path)}`,
      `wrk.headers = ${luaHeaders(fixed, headers)}`,
      fixed.body === undefined ? '' : `wrk.body = ${lua(fixed.body)}`,
    ].join('\n');
  }
  const timed = timedApart(load);
  let cumulative = 0;
  const templates = load.requests.map(({ weight, request }) => {
    cumulative += weight;
    const fields = [
      `upTo = ${cumulative}`,
      `method = ${lua(request.method)}`,
      `path = ${lua(request.path)}`,
      `headers = ${luaHeaders(request, headers)}`,
      request.body === undefined ? undefined : `body = ${lua(request.body)}`,
      request.randomIdUpTo === undefined ? undefined : `randomIdUpTo = ${request.randomIdUpTo}`,
    ];
    return `  { ${fields.filter((field) => field !== undefined).join(', ')} },`;
  });
  return `local templates = {
${templates.join('\n')}
}
${timed ? `${LUA_MICROS}\nlocal samples\ninit = function(args) samples = io.open(${lua(samplesPath)}, "w") end` : ''}
-- Formatted per request: each carries a random id or, in a mix, its own X-Request-Id.
request = function()
  local draw = math.random()
  for i, t in ipairs(templates) do
    if draw < t.upTo or i == #templates then
      ${timed ? 't.headers["X-Request-Id"] = "bench-" .. i .. "-" .. micros()' : ''}
      return wrk.format(t.method, t.randomIdUpTo and (t.path .. math.random(1, t.randomIdUpTo)) or t.path, t.headers, t.body)
    end
  end
end
${
  timed
    ? `response = function(status, headers, body)
  local kind, sent = string.match(headers["x-request-id"] or "", "^bench%-(%d+)%-(%d+)$")
  if kind then samples:write(kind, " ", micros() - tonumber(sent), "\\n") end
end`
    : ''
}`;
}

/** The samples the script wrote, `samples[i]` in ms for `load.requests[i]`. */
function readSamples(load: Load, path: string): number[][] {
  const samples: number[][] = load.requests.map(() => []);
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [kind, micros] = line.split(' ');
    if (micros !== undefined) samples[Number(kind) - 1]?.push(Number(micros) / 1000);
  }
  return samples;
}

/** wrk's own summary is text; this prints what the report needs as one JSON line. Latencies are in µs. */
const DONE_SCRIPT = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n${MARKER}{"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d}\\n', summary.requests, summary.duration, e.connect, e.read,
    e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99)))
end`;

interface WrkSummary {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
}

/** wrk with one thread, as the reference figures were taken (`wrk -t1`); the other core is the server's. */
export function wrkGenerator(dir: string, cleanup: Cleanup): LoadGenerator {
  let scripts = 0;
  return loadGenerator(`wrk ${wrkVersion()} (1 thread)`, async (load, settings) => {
    scripts += 1;
    const script = join(dir, `load-${scripts}.lua`);
    const samplesPath = join(dir, `latency-${scripts}.txt`);
    writeFileSync(script, `${requestScript(load, settings.headers, samplesPath)}\n${DONE_SCRIPT}\n`);
    const args = [
      '-t1',
      `-c${settings.connections}`,
      `-d${Math.ceil(settings.seconds)}s`,
      `--timeout`,
      `${REQUEST_TIMEOUT_SECONDS}s`,
      '-s',
      script,
      `${settings.origin}/`,
    ];
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stop = cleanup.defer('wrk', () => stopChild(child, 'SIGKILL', 1000).then(() => undefined));
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    // -d takes whole seconds; on SIGINT wrk stops and reports what it measured, over the time it ran.
    const early = Number.isInteger(settings.seconds)
      ? undefined
      : setTimeout(() => child.kill('SIGINT'), settings.seconds * 1000);
    // 'close', not 'exit': the output is complete only once wrk's pipes have closed.
    const exit = await new Promise<Exit>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => resolve({ code, signal }));
    }).finally(() => clearTimeout(early));
    await stop();
    const line = output.split('\n').find((text) => text.startsWith(MARKER));
    if (exit.code !== 0 || line === undefined) {
      throw new Error(`wrk ${args.join(' ')} failed (${JSON.stringify(exit)}):\n${output}`);
    }
    const summary = JSON.parse(line.slice(MARKER.length)) as WrkSummary;
    return {
      requests: summary.requests,
      seconds: summary.durationUs / 1e6,
      p50Ms: summary.p50Us / 1000,
      p99Ms: summary.p99Us / 1000,
      errorResponses: summary.status,
      socketErrors: summary.connect + summary.read + summary.write,
      timeouts: summary.timeout,
      ...(timedApart(load) ? { samples: readSamples(load, samplesPath) } : {}),
    };
  });
}
