import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { InstructionSettings } from './instructions.js';
import { TOLERANCE } from './paired-ratios.js';
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.js';

export type StoreName = 'sqlite' | 'postgres';
export type ToolName = 'wrk' | 'autocannon';

export interface BenchOptions {
  readonly pets: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly stores: readonly StoreName[];
  /** True when the stores were named on the command line: an unreachable one is then a failure, not a skip. */
  readonly storesRequested: boolean;
  readonly scenarios: readonly ScenarioName[];
  /** Undefined: wrk when it is on PATH, else autocannon. */
  readonly tool: ToolName | undefined;
  readonly quick: boolean;
  readonly outPath: string;
  /** When set, the service runs with --cpu-prof and writes its profile into this directory. */
  readonly cpuProfDir: string | undefined;
  /** `serve --workers N` when above 1; one process otherwise. */
  readonly workers: number;
  /** The service gets REDIS_URL, a redis-server of the bench's own, and each scenario its Redis commands. */
  readonly redis: boolean;
  /**
   * With --against: the git revision served as "before", the one served as "after" (undefined: the working
   * tree), and the ABBA rounds per order.
   */
  readonly against:
    | {
        readonly rev: string;
        readonly afterRev: string | undefined;
        readonly rounds: number;
        /** --after-env: settings only the after build's service gets (the same build with tracing on, say). */
        readonly afterEnv: Readonly<Record<string, string>>;
        /** Instructions per request under callgrind, which then decide; undefined without --instructions. */
        readonly instructions: InstructionSettings | undefined;
      }
    | undefined;
}

export const USAGE = `Usage: npm run bench -- [options]

  --quick              every scenario for about a second, 1,000 pets (CI: keeps the harness working)
  --pets N             pets in the fresh database (default 100000; 1000 with --quick)
  --connections N      concurrent connections (default 50)
  --duration S         seconds per scenario (default 10; 1 with --quick)
  --warmup S           seconds of unmeasured load before each scenario (default 2; 0.5 with --quick)
  --store NAME         sqlite, postgres or both (default both; PostgreSQL is skipped when unreachable)
  --scenario NAMES     run only these (comma-separated): ${SCENARIO_NAMES.join(', ')}
  --tool NAME          wrk or autocannon (default wrk when installed)
  --out FILE           JSON results (default bench/results/latest.json; the table goes beside it as .md)
  --cpu-prof DIR       run the service under node --cpu-prof, one .cpuprofile per store (and worker) in DIR
  --workers N          run the service as serve --workers N (default 1: one process); CPU and RSS are summed
  --redis              start a private redis-server, give the service REDIS_URL, and report Redis commands
                       per request and redis-server's CPU for each scenario
  --against REV        compare git revision REV (before) with the working tree (after): both served side by
                       side on databases seeded the same, the load alternating between them in ABBA rounds,
                       then again with their places swapped; reports after/before per scenario. Here
                       --duration is seconds per round (default 2; 1 with --quick); no ceiling, no
                       create-webhook, no --redis or --cpu-prof
  --after REV          with --against: serve git revision REV as after, instead of the working tree
  --after-env NAME=V   with --against: give the after build's service this setting too (repeatable); with
                       --after the same revision as --against, one build compared with itself, set otherwise
  --rounds N           with --against: rounds per order, even (default 8; 2 with --quick)
  --instructions       with --against: also serve each build under valgrind's callgrind (valgrind must be
                       installed; slow: 6.5 min for three scenarios on one store, more on a busy machine)
                       and count every scenario's instructions per request: requests one at a time from the
                       bench, uncounted warm-up first, then samples paired build with build (the same
                       requests); the median of the pairs' after/before decides, flagged above ${1 + TOLERANCE}.
                       The same build reads itself within 0.3 %, a 5 % cost is found (docs/performance.md).
                       Opt-in, as it takes that long
  --samples N          with --against: counted samples per scenario and build (default 9; 3 with --quick)
  --sample-requests N  with --against: requests per counted sample (default 200; 20 with --quick)
  --warmup-requests N  with --against: uncounted requests before a scenario's samples (default 1000; 100
                       with --quick)`;

export class UsageError extends Error {}

type NumberKind = 'count' | 'seconds' | 'seconds or 0';
const EXPECTED: Record<NumberKind, string> = {
  count: 'a positive integer',
  seconds: 'a positive number of seconds',
  'seconds or 0': 'a number of seconds, 0 or more',
};

function numberOption(name: string, text: string | undefined, fallback: number, kind: NumberKind): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  const valid =
    text.trim() !== '' &&
    Number.isFinite(value) &&
    (kind === 'seconds or 0' ? value >= 0 : value > 0) &&
    (kind !== 'count' || Number.isInteger(value));
  if (!valid) throw new UsageError(`--${name} must be ${EXPECTED[kind]}, got "${text}"`);
  return value;
}

function oneOf<T extends string>(name: string, text: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(text)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got "${text}"`);
  }
  return text as T;
}

/** The scenarios named in a comma-separated list, in the order they always run in (create before create-webhook). */
function chosenScenarios(text: string): ScenarioName[] {
  const named = text.split(',').map((item) => oneOf('scenario', item.trim(), SCENARIO_NAMES));
  return SCENARIO_NAMES.filter((name) => named.includes(name));
}

/** What --against cannot measure side by side, and why. */
export const NOT_AGAINST = {
  'create-webhook': 'create-webhook needs a webhook receiver and subscription per service',
  redis: '--redis would share one redis-server between the two services',
  'cpu-prof': "--cpu-prof would mix the two services' profiles",
} as const;

interface AgainstValues {
  against?: string | undefined;
  after?: string | undefined;
  'after-env'?: string[] | undefined;
  rounds?: string | undefined;
  instructions?: boolean | undefined;
  samples?: string | undefined;
  'sample-requests'?: string | undefined;
  'warmup-requests'?: string | undefined;
}

/** The options that only mean something with --against, as named on the command line. */
const AGAINST_ONLY = [
  'rounds',
  'after',
  'after-env',
  'instructions',
  'samples',
  'sample-requests',
  'warmup-requests',
] as const;

function instructionSettings(values: AgainstValues, quick: boolean): InstructionSettings | undefined {
  const counts = ['samples', 'sample-requests', 'warmup-requests'] as const;
  if (!values.instructions) {
    const given = counts.find((name) => values[name] !== undefined);
    if (given !== undefined) throw new UsageError(`--${given} counts instructions: only with --instructions`);
    return undefined;
  }
  return {
    samples: numberOption('samples', values.samples, quick ? 3 : 9, 'count'),
    requestsPerSample: numberOption('sample-requests', values['sample-requests'], quick ? 20 : 200, 'count'),
    warmupRequests: numberOption('warmup-requests', values['warmup-requests'], quick ? 100 : 1000, 'count'),
  };
}

/** --after-env's NAME=VALUE settings. */
function afterEnv(settings: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    settings.map((setting) => {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(setting);
      if (match === null) throw new UsageError(`--after-env must be NAME=VALUE, got "${setting}"`);
      return [match[1], match[2]];
    }),
  );
}

function againstOptions(
  values: AgainstValues,
  quick: boolean,
  excluded: (keyof typeof NOT_AGAINST)[],
): BenchOptions['against'] {
  const { against: rev, after, rounds } = values;
  if (rev === undefined) {
    const given = AGAINST_ONLY.find((name) => values[name] !== undefined && values[name] !== false);
    if (given !== undefined) throw new UsageError(`--${given} needs --against`);
    return undefined;
  }
  const [first] = excluded;
  if (first !== undefined) throw new UsageError(`--against: ${NOT_AGAINST[first]}`);
  const count = numberOption('rounds', rounds, quick ? 2 : 8, 'count');
  // ABBA: each place goes first as often as second, so the drift within a pair of rounds cancels.
  if (count % 2 !== 0) throw new UsageError(`--rounds must be even (ABBA goes by pairs of rounds), got "${rounds}"`);
  return {
    rev,
    afterRev: after,
    rounds: count,
    afterEnv: afterEnv(values['after-env'] ?? []),
    instructions: instructionSettings(values, quick),
  };
}

/** Parses the command line; undefined means --help was asked for. */
export function parseOptions(args: string[], repoRoot: string): BenchOptions | undefined {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      quick: { type: 'boolean', default: false },
      pets: { type: 'string' },
      connections: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      store: { type: 'string' },
      scenario: { type: 'string' },
      tool: { type: 'string' },
      out: { type: 'string' },
      'cpu-prof': { type: 'string' },
      workers: { type: 'string' },
      redis: { type: 'boolean', default: false },
      against: { type: 'string' },
      after: { type: 'string' },
      'after-env': { type: 'string', multiple: true },
      rounds: { type: 'string' },
      instructions: { type: 'boolean', default: false },
      samples: { type: 'string' },
      'sample-requests': { type: 'string' },
      'warmup-requests': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const quick = values.quick;
  const scenarios = values.scenario === undefined ? SCENARIO_NAMES : chosenScenarios(values.scenario);
  const against = againstOptions(values, quick, [
    ...(values.scenario !== undefined && scenarios.includes('create-webhook') ? (['create-webhook'] as const) : []),
    ...(values.redis ? (['redis'] as const) : []),
    ...(values['cpu-prof'] !== undefined ? (['cpu-prof'] as const) : []),
  ]);
  const store =
    values.store === undefined
      ? 'both'
      : oneOf<StoreName | 'both'>('store', values.store, ['sqlite', 'postgres', 'both']);
  return {
    quick,
    pets: numberOption('pets', values.pets, quick ? 1000 : 100_000, 'count'),
    connections: numberOption('connections', values.connections, 50, 'count'),
    durationSeconds: numberOption('duration', values.duration, quick ? 1 : against === undefined ? 10 : 2, 'seconds'),
    warmupSeconds: numberOption('warmup', values.warmup, quick ? 0.5 : 2, 'seconds or 0'),
    stores: store === 'both' ? ['sqlite', 'postgres'] : [store],
    storesRequested: store !== 'both',
    // Side by side, create-webhook is left out unless named (which againstOptions refuses).
    scenarios: against === undefined ? scenarios : scenarios.filter((name) => name !== 'create-webhook'),
    tool: values.tool === undefined ? undefined : oneOf<ToolName>('tool', values.tool, ['wrk', 'autocannon']),
    outPath: resolve(values.out ?? resolve(repoRoot, 'bench/results/latest.json')),
    cpuProfDir: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    workers: numberOption('workers', values.workers, 1, 'count'),
    redis: values.redis,
    against,
  };
}
