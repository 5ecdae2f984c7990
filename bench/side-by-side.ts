/**
 * `npm run bench -- --against REV`: REV's build (before) and the working tree's, or --after's revision's
 * (after), served at once on databases of their own seeded the same, with one load generator alternating
 * between them in ABBA rounds: the machine's slow drift then weighs on both alike, which runs one after
 * the other on this noisy VM (±30 % between runs) cannot give.
 */
import { join } from 'node:path';
import { cliStdout, createKey } from '../dev/petstore-cli.js';
import type { Cleanup } from './cleanup.js';
import type { ScenarioComparison, StoreComparison } from './comparison-report.js';
import { freshDatabase } from './databases.js';
import { twoFreePorts } from './free-ports.js';
import {
  type CountedService,
  callgrindWrapper,
  countInstructions,
  gcAckFileIn,
  type InstructionCount,
  type InstructionSettings,
  pairedRatio,
  seededRandom,
  sendSequentially,
  valgrindInstalled,
} from './instructions.js';
import type { Load, LoadGenerator, LoadResult } from './load.js';
import { type BenchOptions, NOT_AGAINST, type StoreName } from './options.js';
import {
  estimate,
  estimateRange,
  firstPlaceLeads,
  MORE_INSTRUCTIONS_ABOVE,
  type Order,
  orderRatio,
  type Round,
  SLOWER_BELOW,
  sideFigures,
} from './paired-ratios.js';
import type { Report } from './report.js';
import { type BuiltRevision, buildRevision, snapshotWorkingTree } from './revision-build.js';
import { type Scenario, scenarios } from './scenarios.js';
import { type Seeded, seed } from './seed.js';
import { type Service, serviceEnv, startService, type Wrapper } from './service.js';

type Version = 'before' | 'after';

/**
 * The two orders: who takes the first place (the first port, set up first). The service in the second
 * place measured a few per cent faster whichever it was, so each comparison is made both ways.
 */
const ORDERS: readonly (readonly [Version, Version])[] = [
  ['before', 'after'],
  ['after', 'before'],
];

/** What a run of the bench has set up before it compares. */
interface Bench {
  readonly options: BenchOptions;
  readonly generator: LoadGenerator;
  readonly dir: string;
  readonly cleanup: Cleanup;
  readonly report: Report;
}

export interface SideBySide extends Bench {
  readonly rounds: number;
  readonly before: BuiltRevision;
  /** --after's revision, or the working tree as `npm run bench` built it. */
  readonly after: BuiltRevision;
  readonly progress: (line: string) => void;
}

/** Builds the revisions of --against (and --after) and records in the report what is compared. */
export async function prepareSideBySide(
  bench: Bench,
  repo: string,
  progress: (line: string) => void,
): Promise<SideBySide> {
  const { rev, afterRev, rounds, instructions, afterEnv = {} } = bench.options.against ?? {};
  if (rev === undefined || rounds === undefined) throw new Error('prepareSideBySide needs options.against');
  if (instructions !== undefined && !valgrindInstalled()) {
    throw new Error('counting instructions needs valgrind (apt-get install valgrind), or leave out --instructions');
  }
  const build = (what: string, version: Version) => {
    progress(`building ${what} (${version}) in a temporary checkout`);
    return buildRevision(what, repo, join(bench.dir, `${version}-revision`));
  };
  const before = await build(rev, 'before');
  const after =
    afterRev === undefined
      ? await snapshotWorkingTree(repo, join(bench.dir, 'after-working-tree'))
      : await build(afterRev, 'after');
  // parseOptions refuses create-webhook when named, and leaves it out when not.
  const leftOut = [NOT_AGAINST['create-webhook']];
  for (const reason of leftOut) progress(`not compared: ${reason}`);
  const settings = Object.entries(afterEnv).map(([name, value]) => `${name}=${value}`);
  const afterLabel =
    (afterRev === undefined ? `the working tree (${after.commit})` : `\`${after.rev}\` (${after.commit})`) +
    (settings.length === 0 ? '' : ` with ${settings.join(', ')}`);
  bench.report.against = { rev, commit: before.commit, after: afterLabel, rounds, instructions, leftOut };
  return { ...bench, rounds, before, after, progress };
}

interface Side {
  readonly version: Version;
  readonly service: Service;
  readonly headers: Record<string, string>;
}

/**
 * One side on `port`, on a database of its own that its own revision migrates (two revisions' schemas may
 * differ, so one copied database would not do) and the bench seeds with the same rows for both.
 */
async function startSide(
  run: SideBySide,
  store: StoreName,
  version: Version,
  port: number,
  label: string,
  wrapper?: Wrapper,
) {
  const { options, dir, cleanup } = run;
  const { cli } = version === 'before' ? run.before : run.after;
  const database = await freshDatabase(store, dir, cleanup, label);
  const env = {
    ...serviceEnv(database.url),
    PORT: String(port),
    ...(version === 'after' ? options.against?.afterEnv : undefined),
  };
  await cliStdout(['migrate'], env, cli);
  const seeded = await seed(database, options.pets);
  const key = await createKey(env, 'bench', cli);
  const service = await startService(env, join(dir, `${label}.log`), cleanup, {
    cpuProfDir: undefined,
    workers: options.workers,
    cli,
    wrapper,
  });
  const side: Side = { version, service, headers: { Authorization: `Bearer ${key}` } };
  return { side, seeded };
}

function drive(run: SideBySide, side: Side, load: Load, seconds: number): Promise<LoadResult> {
  const { origin } = side.service;
  return run.generator.run(load, { origin, headers: side.headers, connections: run.options.connections, seconds });
}

/** Warm-up on each side, then the ABBA rounds between the two places. */
async function measureOrder(run: SideBySide, places: readonly [Side, Side], scenario: Scenario): Promise<Round[]> {
  const { warmupSeconds, durationSeconds } = run.options;
  if (warmupSeconds > 0) {
    for (const side of places) await drive(run, side, scenario.load, warmupSeconds);
  }
  const rounds: Round[] = [];
  for (let round = 0; round < run.rounds; round++) {
    const [lead, next] = firstPlaceLeads(round) ? places : ([places[1], places[0]] as const);
    const leadResult = await drive(run, lead, scenario.load, durationSeconds);
    const nextResult = await drive(run, next, scenario.load, durationSeconds);
    const of = (version: Version) => (lead.version === version ? leadResult : nextResult);
    rounds.push({ before: of('before'), after: of('after') });
  }
  return rounds;
}

function ratioRange(rounds: readonly Round[]): string {
  const ratios = rounds.map(({ before, after }) => after.requestsPerSecond / before.requestsPerSecond);
  return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
}

/** Each build's count of a scenario. */
interface CountedPair {
  readonly before: InstructionCount;
  readonly after: InstructionCount;
}

/**
 * The instruction count decides when there is one (the neighbours cannot move it); req/s only without it.
 */
function compared(scenario: Scenario, orders: readonly Order[], counted: CountedPair | undefined): ScenarioComparison {
  const rounds = orders.flatMap((order) => order.rounds);
  const ratio = estimate(orders);
  const instructions =
    counted === undefined ? undefined : { ...counted, ratio: pairedRatio(counted.before, counted.after) };
  return {
    name: scenario.name,
    description: scenario.description,
    before: sideFigures(rounds.map(({ before }) => before)),
    after: sideFigures(rounds.map(({ after }) => after)),
    orders,
    estimate: ratio,
    range: estimateRange(orders),
    ...(instructions === undefined ? {} : { instructions }),
    slower: instructions === undefined ? ratio < SLOWER_BELOW : instructions.ratio > MORE_INSTRUCTIONS_ABOVE,
  };
}

/**
 * Every chosen scenario's warm-up once, before any is counted: V8 goes on compiling the code that all of
 * them run well past one scenario's warm-up, and the first scenario counted would carry that (a self-test
 * with 1,500 uncounted requests per scenario read list-20, counted first, 1.088; the next two 0.98–1.00).
 */
async function warmUpAll(side: Side, chosen: readonly Scenario[], settings: InstructionSettings): Promise<void> {
  for (const [index, scenario] of chosen.entries()) {
    await sendSequentially(
      side.service.origin,
      side.headers,
      scenario.load,
      settings.warmupRequests,
      seededRandom(-index),
    );
  }
}

/**
 * One build under callgrind on `port`, every chosen scenario counted on it in turn. Each scenario's
 * requests come from the same seed on both builds, so both count the same requests.
 */
async function countSide(
  run: SideBySide,
  store: StoreName,
  version: Version,
  port: number,
  chosen: readonly Scenario[],
  settings: InstructionSettings,
): Promise<InstructionCount[]> {
  const label = `${store}-${version}-callgrind`;
  const dumpFile = join(run.dir, `${label}.out`);
  const gcAckFile = gcAckFileIn(join(run.dir, `${label}.gc-ack`));
  const wrapper = callgrindWrapper(dumpFile, join(run.dir, `${label}.valgrind.log`), gcAckFile);
  const { side } = await startSide(run, store, version, port, label, wrapper);
  const counted: CountedService = {
    service: side.service,
    headers: side.headers,
    dumpFile,
    gcAckFile,
    dumps: 0,
    collections: 0,
  };
  try {
    await warmUpAll(side, chosen, settings);
    const counts: InstructionCount[] = [];
    for (const [index, scenario] of chosen.entries()) {
      const count = await countInstructions(counted, scenario.load, settings, index + 1);
      const samples = count.samples.map((value) => Math.round(value)).join(', ');
      run.progress(
        `${store} ${scenario.name}, ${version}: ${Math.round(count.median)} instructions/request (${samples})`,
      );
      counts.push(count);
    }
    return counts;
  } finally {
    await side.service.stop();
  }
}

/**
 * Both builds under callgrind at once, each on a database of its own seeded alike: the count of one does
 * not depend on what the other is doing, and valgrind's slowness is paid once instead of twice.
 */
async function countStore(
  run: SideBySide,
  store: StoreName,
  chosen: readonly Scenario[],
  settings: InstructionSettings,
): Promise<Map<Scenario, CountedPair>> {
  run.progress(`${store}: counting instructions per request under callgrind, both builds at once`);
  const ports = await twoFreePorts();
  const [before, after] = await Promise.all([
    countSide(run, store, 'before', ports[0], chosen, settings),
    countSide(run, store, 'after', ports[1], chosen, settings),
  ]);
  return new Map(
    chosen.map((scenario, index) => {
      const pair = { before: before[index], after: after[index] };
      if (pair.before === undefined || pair.after === undefined) throw new Error(`${scenario.name} was not counted`);
      return [scenario, { before: pair.before, after: pair.after }];
    }),
  );
}

/** The two sides in `versions`' places, set up one after the other, the first on the first port. */
async function startPair(
  run: SideBySide,
  store: StoreName,
  versions: readonly [Version, Version],
  ports: readonly [number, number],
  label: string,
) {
  const sides: Side[] = [];
  let seeded: Seeded | undefined;
  for (const place of [0, 1] as const) {
    const version = versions[place];
    const started = await startSide(run, store, version, ports[place], `${store}-${version}-${label}`);
    sides.push(started.side);
    seeded ??= started.seeded;
    const what = `${version} (${(version === 'before' ? run.before : run.after).rev})`;
    run.progress(`${store}: ${what} serves ${started.side.service.origin}`);
  }
  const [first, second] = sides;
  if (first === undefined || second === undefined || seeded === undefined) throw new Error('a side did not start');
  return { places: [first, second] as const, seeded };
}

/** Every chosen scenario on `store`, in both orders; a fresh pair of services and databases for each order. */
export async function compareStore(run: SideBySide, store: StoreName): Promise<StoreComparison> {
  const chosen = scenarios(run.options.pets).filter(({ name }) => run.options.scenarios.includes(name));
  const ports = await twoFreePorts();
  const orders = new Map<Scenario, Order[]>(chosen.map((scenario) => [scenario, []]));
  let seeded: Seeded | undefined;
  for (const [index, versions] of ORDERS.entries()) {
    const pair = await startPair(run, store, versions, ports, String(index + 1));
    seeded ??= pair.seeded;
    try {
      for (const scenario of chosen) {
        const rounds = await measureOrder(run, pair.places, scenario);
        const order: Order = { first: versions[0], rounds, ratio: orderRatio(rounds) };
        orders.get(scenario)?.push(order);
        run.progress(
          `${store} ${scenario.name}, ${order.first} first: after/before ${order.ratio.toFixed(3)} ` +
            `(rounds ${ratioRange(rounds)})`,
        );
      }
    } finally {
      for (const side of pair.places) await side.service.stop();
    }
  }
  if (seeded === undefined) throw new Error('no service was set up');
  const settings = run.options.against?.instructions;
  const counted = settings === undefined ? undefined : await countStore(run, store, chosen, settings);
  return {
    store,
    seeded,
    scenarios: chosen.map((scenario) => compared(scenario, orders.get(scenario) ?? [], counted?.get(scenario))),
  };
}
