import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { type Against, againstLines, comparisonTable, type StoreComparison } from './comparison-report.js';
import { number } from './format.js';
import type { LoadResult } from './load.js';
import type { BenchOptions, StoreName } from './options.js';
import type { RedisFigures } from './redis.js';
import type { Seeded } from './seed.js';
import { SERVICE_SETTINGS } from './service.js';
import type { Usage } from './usage.js';
import type { WebhookFigures } from './webhook-subscription.js';

export interface Measured {
  readonly name: string;
  readonly description: string;
  readonly load: LoadResult;
  /** Of the server process: the service, or the ceiling server. */
  readonly usage: Usage;
  /** Responses of 400 or more by status, from the service's log (empty when there were none). */
  readonly errorStatuses: Readonly<Record<string, number>>;
  /**
   * Request log lines the service wrote for the measured requests (every response must have one; fewer
   * means the log fell behind and dropped lines). Undefined for the ceiling, which logs nothing.
   */
  readonly requestsLogged?: number;
  /** Log lines the service itself counted as dropped during the scenario (its /metrics); exact. */
  readonly logLinesDropped?: number;
  /** req/s ÷ the ceiling's req/s. */
  readonly ratioToCeiling: number;
  /** For a scenario measured with a webhook endpoint subscribed: its deliveries to the bench's receiver. */
  readonly webhooks?: WebhookFigures;
  /** With --redis: what Redis did while the scenario was measured. */
  readonly redis?: RedisFigures;
}

export interface StoreResults {
  readonly store: StoreName;
  readonly seeded: Seeded;
  readonly scenarios: Measured[];
}

export interface Report {
  readonly startedAt: string;
  readonly command: string;
  /** The checkout measured: its commit, and whether files differed from it (docs/performance.md cites both). */
  readonly commit: string;
  readonly machine: { cpus: number; model: string; memoryGb: number; kernel: string; node: string };
  readonly loadGenerator: string;
  readonly settings: { pets: number; connections: number; durationSeconds: number; warmupSeconds: number };
  /** How the service ran: the environment it was given beyond the database. */
  readonly service: Readonly<Record<string, string>>;
  ceiling: Measured | undefined;
  readonly stores: StoreResults[];
  /** With --against: what was compared, and each store's comparison (then `stores` is empty). */
  against: Against | undefined;
  readonly comparisons: StoreComparison[];
  readonly skipped: { store: StoreName; reason: string }[];
  /** Anything a reader must not miss, e.g. error responses in a read-only scenario. */
  readonly problems: string[];
}

function machine(): Report['machine'] {
  const all = cpus();
  return {
    cpus: all.length,
    model: all[0]?.model ?? 'unknown',
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: `Linux ${release()}`,
    node: process.version,
  };
}

/** The checkout's commit, and whether the working tree differs from it; `unknown` outside git. */
function commit(): string {
  // --no-optional-locks: the others' git commands in this checkout never find the index locked by the bench.
  const git = (...args: string[]) =>
    execFileSync('git', ['--no-optional-locks', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const head = git('rev-parse', '--short', 'HEAD').trim();
    return git('status', '--porcelain', '--untracked-files=no').trim() === ''
      ? head
      : `${head} with uncommitted changes`;
  } catch {
    return 'unknown';
  }
}

/** A run's report before anything is measured: how the load and the service are set up. */
export function newReport(
  options: BenchOptions,
  command: string,
  loadGenerator: string,
  redisVersion: string | undefined,
): Report {
  const { pets, connections, durationSeconds, warmupSeconds, workers } = options;
  return {
    startedAt: new Date().toISOString(),
    command,
    commit: commit(),
    machine: machine(),
    loadGenerator,
    settings: { pets, connections, durationSeconds, warmupSeconds },
    service: {
      command:
        workers > 1 ? `petstore serve --workers ${workers} (CPU, RSS: all processes)` : 'petstore serve (one process)',
      ...SERVICE_SETTINGS,
      REDIS_URL:
        redisVersion === undefined ? 'unset (rate limits in memory)' : `a redis-server ${redisVersion} of its own`,
      logs: 'to a file',
      auth: 'on (one key, read+write)',
      metrics: 'on',
      DATABASE_POOL_SIZE: '10 (default; PostgreSQL)',
    },
    ceiling: undefined,
    stores: [],
    against: undefined,
    comparisons: [],
    skipped: [],
    problems: [],
  };
}

const STORE_TITLES: Record<StoreName, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

function errors(measured: Measured): string {
  const { errorResponses, socketErrors, timeouts } = measured.load;
  const statuses = Object.entries(measured.errorStatuses)
    .map(([status, count]) => `${count}×${status}`)
    .join(' ');
  const responses =
    errorResponses === 0 || statuses === '' ? number(errorResponses) : `${number(errorResponses)} (${statuses})`;
  return `${responses} / ${number(socketErrors)} / ${number(timeouts)}`;
}

function row(measured: Measured): string {
  const { load, usage } = measured;
  const cells = [
    measured.name,
    number(load.requestsPerSecond),
    number(load.p50Ms, 2),
    number(load.p99Ms, 2),
    errors(measured),
    `${number(usage.rssMb)} / ${number(usage.peakRssMb)}`,
    number(usage.cpuPercent),
    number(measured.ratioToCeiling, 2),
  ];
  return `| ${cells.join(' | ')} |`;
}

/**
 * For scenarios of several kinds of request: each kind's latency, apart (the table's is of all together),
 * and how many responses were timed if not all (the service echoes the id that carries the send time).
 */
function latencyByRequest(scenarios: readonly Measured[]): string[] {
  return scenarios.flatMap(({ name, load }) => {
    if (load.byRequest === undefined) return [];
    const timed = load.byRequest.reduce((sum, kind) => sum + kind.count, 0);
    const kinds = load.byRequest
      .map(
        (kind) =>
          `${kind.request} p50 ${number(kind.p50Ms, 2)} / p99 ${number(kind.p99Ms, 2)} ms (${number(kind.count)})`,
      )
      .join('; ');
    const coverage = timed === load.requests ? '' : ` (${number(timed)} of ${number(load.requests)} responses timed)`;
    return [`- ${name}, latency by request: ${kinds}${coverage}`];
  });
}

const WEBHOOK_HEADER = [
  '| Scenario | creates 2xx | deliveries | distinct ids | deliveries/s in load | deliveries/s to drained | deliveries/s after the load | bare client/s | after ÷ bare | service CPU µs per delivery after | lag p50 / p99 / max ms | drain ms | req/s ÷ create req/s |',
  '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
];

/** The deliveries of the scenarios measured with a webhook endpoint, and their req/s against create's. */
function webhookTable(scenarios: readonly Measured[]): string[] {
  const create = scenarios.find(({ name }) => name === 'create');
  const rows = scenarios.flatMap(({ name, load, webhooks: w }) => {
    if (w === undefined) return [];
    const lag = [w.lagP50Ms, w.lagP99Ms, w.lagMaxMs].map((ms) => (ms === null ? '–' : number(ms))).join(' / ');
    const ratio = create === undefined ? '–' : number(load.requestsPerSecond / create.load.requestsPerSecond, 2);
    const counts = [w.created, w.deliveries, w.distinctIds, w.perSecondDuringLoad, w.perSecondUntilDrained];
    const { perSecondAfterLoad: after, bareClientPerSecond: bare } = w;
    const pace = [after, bare].map((perSecond) => (perSecond === null ? '–' : number(perSecond)));
    const ofBare = after === null || bare === null ? '–' : number(after / bare, 2);
    const cpu = w.cpuUsPerDeliveryAfterLoad === null ? '–' : number(w.cpuUsPerDeliveryAfterLoad);
    const cells = [...counts.map((count) => number(count)), ...pace, ofBare, cpu, lag, number(w.drainMs), ratio];
    return [`| ${[name, ...cells].join(' | ')} |`];
  });
  if (rows.length === 0) return [];
  const note =
    'Webhook deliveries to a local receiver answering 204 at once (its own process); lag = arrival − the ' +
    "event's timestamp; drain = the last arrival after the load stopped. Creates 2xx are the service's logged " +
    '201s; the requests cut off when the load stopped commit unlogged, so up to one delivery a connection more. ' +
    'After the load, the service drains its backlog with no request to answer; the bare client is node:http ' +
    'posting the last delivery to the same receiver, as many requests in flight as the service sends one endpoint.';
  return ['', note, '', ...WEBHOOK_HEADER, ...rows];
}

/** With --redis: each scenario's Redis commands (per request) and redis-server's CPU. */
function redisTable(scenarios: readonly Measured[]): string[] {
  const rows = scenarios.flatMap(({ name, load, redis }) => {
    if (redis === undefined) return [];
    const perRequest = load.requests === 0 ? '–' : number(redis.commands / load.requests, 4);
    return [`| ${name} | ${number(redis.commands)} | ${perRequest} | ${number(redis.cpuPercent)} |`];
  });
  if (rows.length === 0) return [];
  const note = "Redis during each measured scenario: INFO commandstats before and after (scripts' commands included).";
  return [
    '',
    note,
    '',
    '| Scenario | Redis commands | per request | redis-server CPU % |',
    '|---|--:|--:|--:|',
    ...rows,
  ];
}

const HEADER = [
  '| Scenario | req/s | p50 ms | p99 ms | errors: ≥400 / socket / timeout | server RSS MB end / peak | server CPU % | × ceiling |',
  '|---|--:|--:|--:|--:|--:|--:|--:|',
];

/** How the run was made: the command, the machine, the load, the service. */
function setUp(report: Report): string[] {
  const { machine: m, settings: s, against } = report;
  const service = `- Service: ${Object.entries(report.service)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ')}`;
  const command = `- Command: \`${report.command}\` at commit \`${report.commit}\` (started ${report.startedAt})`;
  const machine = `- Machine: ${m.cpus} × ${m.model}, ${m.memoryGb} GB, ${m.kernel}, Node ${m.node}`;
  if (against !== undefined) {
    return [
      command,
      machine,
      `- Load: ${report.loadGenerator}, ${s.connections} connections, over 127.0.0.1`,
      ...againstLines(against, s.durationSeconds, s.warmupSeconds),
      service,
      `- Pets: ${number(s.pets)} on each side`,
    ];
  }
  return [
    command,
    machine,
    `- Load: ${report.loadGenerator}, ${s.connections} connections, ${s.durationSeconds} s per scenario after ${s.warmupSeconds} s of warm-up, over 127.0.0.1`,
    service,
    `- Pets: ${number(s.pets)}; the ceiling is a bare node:http server sending the bytes of the list-20 response`,
  ];
}

/** `eachSide`: a side-by-side run seeded two databases alike; the time is the first's. */
function seededLine({ seeded }: { seeded: Seeded }, eachSide = false): string {
  const statuses = Object.entries(seeded.byStatus)
    .map(([status, count]) => `${number(count)} ${status}`)
    .join(', ');
  const seconds = `${number(seeded.seconds, 1)} s`;
  return eachSide
    ? `Seeded ${number(seeded.pets)} pets on each side (${statuses}), the first in ${seconds}.`
    : `Seeded ${number(seeded.pets)} pets (${statuses}) in ${seconds}.`;
}

export function markdown(report: Report): string {
  const title = report.against === undefined ? '' : `: ${report.against.rev} (before) against ${report.against.after}`;
  const lines = [`# petstore benchmark${title}`, '', ...setUp(report)];
  for (const comparison of report.comparisons) {
    const title = `## ${STORE_TITLES[comparison.store]}`;
    lines.push('', title, '', seededLine(comparison, true), '', ...comparisonTable(comparison));
  }
  for (const results of report.stores) {
    lines.push(
      '',
      `## ${STORE_TITLES[results.store]}`,
      '',
      seededLine(results),
      '',
      ...HEADER,
      ...(report.ceiling === undefined ? [] : [row(report.ceiling)]),
      ...results.scenarios.map(row),
    );
    const byRequest = latencyByRequest(results.scenarios);
    if (byRequest.length > 0) lines.push('', ...byRequest);
    lines.push(...webhookTable(results.scenarios), ...redisTable(results.scenarios));
  }
  for (const { store, reason } of report.skipped) lines.push('', `${STORE_TITLES[store]} skipped: ${reason}`);
  if (report.problems.length > 0)
    lines.push('', '## Problems', '', ...report.problems.map((problem) => `- ${problem}`));
  return `${lines.join('\n')}\n`;
}

/** Writes the JSON to `path` and the markdown beside it (same name, .md). */
export function save(report: Report, path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  const markdownPath = path.replace(/(\.json)?$/, '.md');
  writeFileSync(markdownPath, markdown(report));
  return markdownPath;
}
