/**
 * `npm run bench`: the service as a separate process on a fresh, seeded database, driven over 127.0.0.1 by
 * a real load generator, next to a bare node:http server sending the same bytes (the ceiling). Prints a
 * markdown table and writes JSON. It fails only when the harness cannot run, never on speed. With
 * --against REV it compares two builds side by side instead (side-by-side.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliStdout, createKey } from '../dev/petstore-cli.js';
import { postgresUnreachable } from '../dev/postgres-admin.js';
import { autocannonGenerator } from './autocannon.js';
import { startCeiling } from './ceiling.js';
import { Cleanup } from './cleanup.js';
import { comparisonProblems } from './comparison-report.js';
import { freshDatabase, POSTGRES_URL } from './databases.js';
import { capture } from './http-capture.js';
import type { Load, LoadGenerator, LoadResult } from './load.js';
import { type BenchOptions, parseOptions, type StoreName, type ToolName, USAGE, UsageError } from './options.js';
import { scenarioProblems } from './problems.js';
import { type BenchRedis, startRedis } from './redis.js';
import { type Measured, markdown, newReport, type Report, type StoreResults, save } from './report.js';
import { LIST_20, type Scenario, scenarios } from './scenarios.js';
import { seed } from './seed.js';
import { type Service, serviceEnv, startService } from './service.js';
import { compareStore, prepareSideBySide } from './side-by-side.js';
import { measureUsage } from './usage.js';
import { type ReceiverProcess, startReceiverProcess } from './webhook-receiver.js';
import { WebhookSubscription } from './webhook-subscription.js';
import { wrkGenerator, wrkInstalled } from './wrk.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const LIST_20_PATH = '/v1/pets?limit=20';

function progress(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function chooseGenerator(tool: ToolName | undefined, dir: string, cleanup: Cleanup): LoadGenerator {
  if (tool === 'wrk' && !wrkInstalled()) {
    throw new Error('wrk is not on PATH (apt-get install wrk), or use --tool autocannon');
  }
  return tool === 'wrk' || (tool === undefined && wrkInstalled()) ? wrkGenerator(dir, cleanup) : autocannonGenerator();
}

interface Run {
  readonly options: BenchOptions;
  readonly generator: LoadGenerator;
  readonly dir: string;
  readonly cleanup: Cleanup;
  readonly report: Report;
  /** The webhook receiver, started by the first scenario that needs it. */
  readonly receiver: () => Promise<ReceiverProcess>;
  /** With --redis: the redis-server every service of the run uses. */
  readonly redis: BenchRedis | undefined;
}

/** Unmeasured load first, so that the server's code is compiled and its caches filled. */
async function warmUp(
  run: Run,
  load: Load,
  origin: string,
  headers: Record<string, string>,
): Promise<LoadResult | undefined> {
  const { options, generator } = run;
  if (options.warmupSeconds === 0) return undefined;
  return generator.run(load, { origin, headers, connections: options.connections, seconds: options.warmupSeconds });
}

/** Measures `load` against `origin`, and meanwhile the server's processes `pids` and Redis, if there is one. */
async function measure(run: Run, load: Load, origin: string, headers: Record<string, string>, pids: number[]) {
  const { options, generator } = run;
  const settings = { origin, headers, connections: options.connections, seconds: options.durationSeconds };
  const measured = () => measureUsage(pids, () => generator.run(load, settings));
  if (run.redis === undefined) return { ...(await measured()), redis: undefined };
  const { result, redis } = await run.redis.during(measured);
  return { ...result, redis };
}

async function measureScenario(
  run: Run,
  scenario: Scenario,
  service: Service,
  headers: Record<string, string>,
  ceilingRps: number,
): Promise<Measured> {
  const events = scenario.webhookEvents;
  const webhook =
    events === undefined
      ? undefined
      : await WebhookSubscription.open(await run.receiver(), service, headers, events, run.cleanup);
  await webhook?.afterWarmUp(await warmUp(run, scenario.load, service.origin, headers));
  const logFrom = await service.settledLogSize();
  const droppedBefore = await service.droppedLogLines();
  const started = Date.now();
  const {
    result: load,
    usage,
    redis,
  } = await measure(run, scenario.load, service.origin, headers, service.processes());
  // Before the log is read: the service logs each delivery, so its log settles only once they are all sent,
  // or, when they did not drain, once the endpoint is removed with them.
  const delivered = await webhook?.drain(load, { started, ended: Date.now() });
  await webhook?.close();
  const log = await service.requestLog(logFrom, await service.settledLogSize());
  const logLinesDropped = (await service.droppedLogLines()) - droppedBefore;
  return {
    name: scenario.name,
    description: scenario.description,
    load,
    usage,
    errorStatuses: log.errorStatuses,
    requestsLogged: log.lines,
    logLinesDropped,
    ratioToCeiling: load.requestsPerSecond / ceilingRps,
    ...(delivered === undefined ? {} : { webhooks: { ...delivered, created: log.created } }),
    ...(redis === undefined ? {} : { redis }),
  };
}

async function measureCeiling(run: Run, service: Service, headers: Record<string, string>): Promise<Measured> {
  const response = await capture(`${service.origin}${LIST_20_PATH}`, headers);
  if (response.status !== 200) throw new Error(`GET ${LIST_20_PATH} answered ${response.status}, not 200`);
  const ceiling = await startCeiling(response, LIST_20_PATH, headers, run.dir, run.cleanup);
  try {
    await warmUp(run, LIST_20, ceiling.origin, headers);
    const { result: load, usage } = await measure(run, LIST_20, ceiling.origin, headers, [ceiling.pid]);
    return {
      name: 'ceiling',
      description: 'bare node:http, the bytes of the list-20 response',
      load,
      usage,
      errorStatuses: {},
      ratioToCeiling: 1,
    };
  } finally {
    await ceiling.stop();
  }
}

function summary(label: string, load: LoadResult): string {
  const errors = load.errorResponses + load.socketErrors + load.timeouts;
  return `${label}: ${Math.round(load.requestsPerSecond)} req/s, p99 ${load.p99Ms} ms, ${errors} errors`;
}

async function benchStore(run: Run, store: StoreName): Promise<StoreResults> {
  const { options, dir, cleanup, report } = run;
  const database = await freshDatabase(store, dir, cleanup);
  const env = serviceEnv(database.url, run.redis?.url);
  await cliStdout(['migrate'], env);
  const seeded = await seed(database, options.pets);
  progress(`${store}: seeded ${seeded.pets} pets in ${seeded.seconds.toFixed(1)} s`);
  const key = await createKey(env, 'bench');
  const headers = { Authorization: `Bearer ${key}` };
  const service = await startService(env, join(dir, `${store}.log`), cleanup, options);
  const results: StoreResults = { store, seeded, scenarios: [] };
  try {
    // Measured once per run, from the first store's response, while that service idles.
    if (report.ceiling === undefined) {
      report.ceiling = await measureCeiling(run, service, headers);
      progress(summary('ceiling', report.ceiling.load));
    }
    const ceilingRps = report.ceiling.load.requestsPerSecond;
    for (const scenario of scenarios(options.pets).filter(({ name }) => options.scenarios.includes(name))) {
      const measured = await measureScenario(run, scenario, service, headers, ceilingRps);
      progress(summary(`${store} ${scenario.name}`, measured.load));
      report.problems.push(...scenarioProblems(store, scenario, measured, options.connections));
      results.scenarios.push(measured);
    }
  } finally {
    await service.stop();
  }
  return results;
}

function commandLine(args: string[]): string {
  // npm sets npm_lifecycle_event to the script it runs.
  if (process.env.npm_lifecycle_event === 'bench') {
    return ['npm run bench', ...(args.length > 0 ? ['--', ...args] : [])].join(' ');
  }
  return ['node --import tsx bench/run.ts', ...args].join(' ');
}

async function bench(options: BenchOptions, args: string[], cleanup: Cleanup): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  cleanup.defer('the temporary directory', () => rmSync(dir, { recursive: true, force: true }));
  const generator = chooseGenerator(options.tool, dir, cleanup);
  const redis = options.redis ? await startRedis(cleanup) : undefined;
  const report = newReport(options, commandLine(args), generator.label, redis?.version);
  let receiver: Promise<ReceiverProcess> | undefined;
  const receive = () => (receiver ??= startReceiverProcess(cleanup));
  const run: Run = { options, generator, dir, cleanup, report, receiver: receive, redis };
  const against = options.against === undefined ? undefined : await prepareSideBySide(run, REPO, progress);
  for (const store of options.stores) {
    const unreachable = store === 'postgres' ? await postgresUnreachable(POSTGRES_URL) : undefined;
    if (unreachable !== undefined) {
      if (options.storesRequested) throw new Error(unreachable);
      progress(`skipping PostgreSQL: ${unreachable}`);
      report.skipped.push({ store, reason: unreachable });
      continue;
    }
    if (against === undefined) {
      report.stores.push(await benchStore(run, store));
    } else {
      const comparison = await compareStore(against, store);
      report.comparisons.push(comparison);
      report.problems.push(...comparisonProblems(comparison));
    }
  }
  const markdownPath = save(report, options.outPath);
  process.stdout.write(`${markdown(report)}\nWritten: ${options.outPath}, ${markdownPath}\n`);
}

async function main(args: string[]): Promise<number> {
  let options: BenchOptions | undefined;
  try {
    options = parseOptions(args, REPO);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (!(error instanceof UsageError) && !String(code).startsWith('ERR_PARSE_ARGS')) throw error;
    process.stderr.write(`bench: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (options === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const cleanup = new Cleanup();
  const interrupted = (signal: NodeJS.Signals) => {
    progress(`${signal}: cleaning up`);
    void cleanup.runAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await bench(options, args, cleanup);
    return 0;
  } finally {
    await cleanup.runAll();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
