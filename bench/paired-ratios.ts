import type { LoadResult } from './load.js';

/** The issue-12 rule, no scenario more than 3 % slower: the one threshold both comparisons derive from. */
export const TOLERANCE = 0.03;
/** An estimate of after/before req/s below this is flagged. */
export const SLOWER_BELOW = 1 - TOLERANCE;
/** A ratio of after/before instructions per request above this is flagged. */
export const MORE_INSTRUCTIONS_ABOVE = 1 + TOLERANCE;

/** One round: the same load on each side, one right after the other. */
export interface Round {
  readonly before: LoadResult;
  readonly after: LoadResult;
}

/** Which side is in the first place (its port, set up first), and the ABBA rounds measured so. */
export interface Order {
  readonly first: 'before' | 'after';
  readonly rounds: readonly Round[];
  /** The geometric mean of the rounds' after/before req/s. */
  readonly ratio: number;
}

/**
 * Whether the first place runs first in round `round` (from 0): A B, B A, A B, B A… Over a pair of rounds
 * each place goes first once, so a drift of the machine's speed within the pair cancels out.
 */
export function firstPlaceLeads(round: number): boolean {
  return round % 2 === 0;
}

function geometricMean(values: readonly number[]): number {
  if (values.length === 0) throw new Error('a geometric mean needs at least one value');
  return Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);
}

/** The paired after/before ratio of an order's rounds. */
export function orderRatio(rounds: readonly Round[]): number {
  return geometricMean(rounds.map(({ before, after }) => after.requestsPerSecond / before.requestsPerSecond));
}

/**
 * After/before over both orders. The service in the second place may run a few per cent faster whichever
 * it is (this VM showed 3–10 %); that bias divides out of the product of the two orders' ratios.
 */
export function estimate(orders: readonly Order[]): number {
  return geometricMean(orders.map(({ ratio }) => ratio));
}

/**
 * The estimate's spread: two standard errors either side, in log space, from how the rounds' ratios
 * scatter within each order. It takes the rounds as independent, which the drift of the machine makes
 * them only roughly; a range that straddles SLOWER_BELOW has not settled the question.
 */
export function estimateRange(orders: readonly Order[]): readonly [number, number] {
  const variances = orders.map(({ rounds }) => {
    const logs = rounds.map(({ before, after }) => Math.log(after.requestsPerSecond / before.requestsPerSecond));
    if (logs.length < 2) return Number.NaN;
    const mean = logs.reduce((sum, value) => sum + value, 0) / logs.length;
    const variance = logs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (logs.length - 1);
    return variance / logs.length;
  });
  const standardError = Math.sqrt(variances.reduce((sum, value) => sum + value, 0)) / orders.length;
  const centre = Math.log(estimate(orders));
  return [Math.exp(centre - 2 * standardError), Math.exp(centre + 2 * standardError)];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** One side's figures over every round of both orders. */
export interface SideFigures {
  /** The mean of the rounds' req/s. */
  readonly requestsPerSecond: number;
  /** The median of the rounds' p99. */
  readonly p99Ms: number;
  /** Responses ≥ 400, socket errors and timeouts, summed over the rounds. */
  readonly errors: number;
}

export function sideFigures(results: readonly LoadResult[]): SideFigures {
  if (results.length === 0) throw new Error('no rounds to sum up');
  return {
    requestsPerSecond: results.reduce((sum, { requestsPerSecond }) => sum + requestsPerSecond, 0) / results.length,
    p99Ms: median(results.map(({ p99Ms }) => p99Ms)),
    errors: results.reduce((sum, r) => sum + r.errorResponses + r.socketErrors + r.timeouts, 0),
  };
}
