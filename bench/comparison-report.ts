import { number } from './format.js';
import type { InstructionCount, InstructionSettings } from './instructions.js';
import type { StoreName } from './options.js';
import { MORE_INSTRUCTIONS_ABOVE, type Order, type SideFigures, SLOWER_BELOW, TOLERANCE } from './paired-ratios.js';
import type { Seeded } from './seed.js';

/** What --against compared: the revision (before) and the working tree or --after's revision (after). */
export interface Against {
  readonly rev: string;
  readonly commit: string;
  /** e.g. "the working tree (HEAD 1a2b3c4 with 3 files changed or new)" */
  readonly after: string;
  readonly rounds: number;
  /** How instructions per request were counted; undefined without --instructions. */
  readonly instructions: InstructionSettings | undefined;
  /** Scenarios not compared, and why. */
  readonly leftOut: readonly string[];
}

export interface ScenarioComparison {
  readonly name: string;
  readonly description: string;
  readonly before: SideFigures;
  readonly after: SideFigures;
  /** Before in the first place, then after in the first place; every round's figures are kept. */
  readonly orders: readonly Order[];
  /** The geometric mean of the orders' after/before ratios. */
  readonly estimate: number;
  /** The estimate ± two standard errors (paired-ratios.ts, estimateRange). */
  readonly range: readonly [number, number];
  /** Each build's instructions per request, and after/before (instructions.ts, pairedRatio). */
  readonly instructions?: {
    readonly before: InstructionCount;
    readonly after: InstructionCount;
    readonly ratio: number;
  };
  /**
   * Flagged: instructions after/before above MORE_INSTRUCTIONS_ABOVE when counted, which then decide;
   * otherwise the req/s estimate below SLOWER_BELOW.
   */
  readonly slower: boolean;
}

export interface StoreComparison {
  readonly store: StoreName;
  /** Each side's database, seeded alike. */
  readonly seeded: Seeded;
  readonly scenarios: readonly ScenarioComparison[];
}

const HEADER = [
  '| Scenario | before req/s | after req/s | before p99 ms | after p99 ms | after/before, before first | after first | estimate | ±2 SE |',
  '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
];

const COUNTED_HEADER = [
  '| Scenario | before instructions/request | after instructions/request | after/before instructions | before req/s | after req/s | before p99 ms | after p99 ms | req/s after/before, before first | after first | estimate | ±2 SE |',
  '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
];

const PERCENT = Math.round(TOLERANCE * 100);
const SLOWER_MARK = `more than ${PERCENT} % slower`;
const MORE_MARK = `more than ${PERCENT} % more instructions`;

function orderRatio(scenario: ScenarioComparison, first: Order['first']): string {
  const order = scenario.orders.find((candidate) => candidate.first === first);
  return order === undefined ? '–' : number(order.ratio, 3);
}

/** A count's median, and the range of its samples. */
function count({ median, samples }: InstructionCount): string {
  return `${number(median)} (${number(Math.min(...samples))}–${number(Math.max(...samples))})`;
}

/** The instruction columns, when counted: they decide, so the req/s estimate is then not marked. */
function instructionCells(scenario: ScenarioComparison): string[] {
  const { instructions } = scenario;
  if (instructions === undefined) return [];
  const ratio = number(instructions.ratio, 3);
  return [
    count(instructions.before),
    count(instructions.after),
    scenario.slower ? `**${ratio}** (${MORE_MARK})` : ratio,
  ];
}

function row(scenario: ScenarioComparison): string {
  const estimate = number(scenario.estimate, 3);
  const reqsDecide = scenario.instructions === undefined;
  const cells = [
    scenario.name,
    ...instructionCells(scenario),
    number(scenario.before.requestsPerSecond),
    number(scenario.after.requestsPerSecond),
    number(scenario.before.p99Ms, 2),
    number(scenario.after.p99Ms, 2),
    orderRatio(scenario, 'before'),
    orderRatio(scenario, 'after'),
    reqsDecide && scenario.slower ? `**${estimate}** (${SLOWER_MARK})` : estimate,
    scenario.range.map((end) => number(end, 2)).join('–'),
  ];
  return `| ${cells.join(' | ')} |`;
}

/** The lines under the report's title that say how the comparison was made. */
export function againstLines(against: Against, secondsPerRound: number, warmupSeconds: number): string[] {
  return [
    `- Before: \`${against.rev}\` (${against.commit}); after: ${against.after}. A revision is built by its ` +
      'own `npm run build` in a temporary checkout; the working tree, by `npm run bench`, and copied',
    `- Side by side: both served at once, each on a database of its own (migrated by its own revision, seeded ` +
      `alike); per scenario ${warmupSeconds} s of warm-up on each, then ${against.rounds} rounds of ` +
      `${secondsPerRound} s on each in ABBA order; then all again on fresh databases with the two services' ` +
      `places (port, set-up order) swapped`,
    `- after/before: the geometric mean of the rounds' paired req/s ratios, per order; estimate: the ` +
      `geometric mean of the two orders, flagged below ${SLOWER_BELOW}, with ± two standard errors from the ` +
      `rounds' scatter (a range across ${SLOWER_BELOW} settles nothing). req/s: the mean of every round; p99: ` +
      'the median of the rounds',
    ...instructionLines(against.instructions),
    ...against.leftOut.map((reason) => `- Not compared: ${reason}`),
  ];
}

function instructionLines(settings: InstructionSettings | undefined): string[] {
  if (settings === undefined)
    return ['- Instructions per request: not counted (without --instructions): req/s decides'];
  return [
    `- Instructions per request, which decide: each build served under valgrind's callgrind (both at once, ` +
      `each on a database of its own seeded alike), counting only while switched on, node with CodSpeed's ` +
      `flags for a count that repeats (no TurboFan: interpreter and baseline code) and its intervals held ` +
      `off; per scenario ${number(settings.warmupRequests)} requests uncounted, then ${settings.samples} ` +
      `samples of ${number(settings.requestsPerSample)} requests, each after a full garbage collection, one ` +
      `request at a time from the bench, in the same seeded order for both builds. Shown: the median of the ` +
      `samples (their range); after/before: the median of sample i's after/before, flagged above ` +
      `${MORE_INSTRUCTIONS_ABOVE}. Instructions of the service's process only (a PostgreSQL server's ` +
      'work is in its own processes, not counted)',
  ];
}

/** One store's comparison table. */
export function comparisonTable(comparison: StoreComparison): string[] {
  const counted = comparison.scenarios.some((scenario) => scenario.instructions !== undefined);
  return [...(counted ? COUNTED_HEADER : HEADER), ...comparison.scenarios.map(row)];
}

/** What a reader must not miss: an estimate below the threshold, and any error on either side. */
export function comparisonProblems(comparison: StoreComparison): string[] {
  return comparison.scenarios.flatMap((scenario) => {
    const label = `${comparison.store} ${scenario.name}`;
    const problems: string[] = [];
    const { instructions } = scenario;
    if (scenario.slower && instructions !== undefined) {
      problems.push(`${label}: after/before instructions per request ${number(instructions.ratio, 3)}, ${MORE_MARK}`);
    } else if (scenario.slower) {
      const range = scenario.range.map((end) => number(end, 2)).join('–');
      problems.push(`${label}: after/before ${number(scenario.estimate, 3)} (±2 SE ${range}), ${SLOWER_MARK}`);
    }
    for (const [side, counted] of [
      ['before', instructions?.before],
      ['after', instructions?.after],
    ] as const) {
      if (counted !== undefined && counted.errors > 0) {
        problems.push(`${label}: ${counted.errors} responses ≥ 400 while counting instructions ${side}`);
      }
    }
    for (const [side, figures] of [
      ['before', scenario.before],
      ['after', scenario.after],
    ] as const) {
      if (figures.errors > 0) problems.push(`${label}: ${figures.errors} errors (≥ 400, socket, timeout) ${side}`);
    }
    return problems;
  });
}
