import { number } from './format.js';
import type { StoreName } from './options.js';
import { type Order, type SideFigures, SLOWER_BELOW } from './paired-ratios.js';
import type { Seeded } from './seed.js';

/** What --against compared: the revision (before) and the working tree or --after's revision (after). */
export interface Against {
  readonly rev: string;
  readonly commit: string;
  /** e.g. "the working tree (HEAD 1a2b3c4 with 3 files changed or new)" */
  readonly after: string;
  readonly rounds: number;
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
  /** The estimate is below SLOWER_BELOW. */
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

const SLOWER_MARK = `more than ${Math.round((1 - SLOWER_BELOW) * 100)} % slower`;

function orderRatio(scenario: ScenarioComparison, first: Order['first']): string {
  const order = scenario.orders.find((candidate) => candidate.first === first);
  return order === undefined ? '–' : number(order.ratio, 3);
}

function row(scenario: ScenarioComparison): string {
  const estimate = number(scenario.estimate, 3);
  const cells = [
    scenario.name,
    number(scenario.before.requestsPerSecond),
    number(scenario.after.requestsPerSecond),
    number(scenario.before.p99Ms, 2),
    number(scenario.after.p99Ms, 2),
    orderRatio(scenario, 'before'),
    orderRatio(scenario, 'after'),
    scenario.slower ? `**${estimate}** (${SLOWER_MARK})` : estimate,
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
    ...against.leftOut.map((reason) => `- Not compared: ${reason}`),
  ];
}

/** One store's comparison table. */
export function comparisonTable(comparison: StoreComparison): string[] {
  return [...HEADER, ...comparison.scenarios.map(row)];
}

/** What a reader must not miss: an estimate below the threshold, and any error on either side. */
export function comparisonProblems(comparison: StoreComparison): string[] {
  return comparison.scenarios.flatMap((scenario) => {
    const label = `${comparison.store} ${scenario.name}`;
    const problems: string[] = [];
    if (scenario.slower) {
      const range = scenario.range.map((end) => number(end, 2)).join('–');
      problems.push(`${label}: after/before ${number(scenario.estimate, 3)} (±2 SE ${range}), ${SLOWER_MARK}`);
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
