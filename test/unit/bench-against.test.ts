/**
 * `npm run bench -- --against REV`: its options, the paired ratios and instruction counts it reports, and a
 * revision that is not there.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { comparisonProblems, type ScenarioComparison, type StoreComparison } from '../../bench/comparison-report.js';
import {
  callgrindWrapper,
  dumpTotal,
  gcAckFileIn,
  type InstructionCount,
  pairedRatio,
  seededRandom,
} from '../../bench/instructions.js';
import type { LoadResult } from '../../bench/load.js';
import { parseOptions, UsageError } from '../../bench/options.js';
import {
  estimate,
  estimateRange,
  firstPlaceLeads,
  type Order,
  orderRatio,
  type Round,
  sideFigures,
} from '../../bench/paired-ratios.js';
import { buildRevision } from '../../bench/revision-build.js';
import { tempDir } from '../helpers/temp-dir.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

function parse(...args: string[]) {
  const options = parseOptions(args, REPO);
  assert.ok(options !== undefined);
  return options;
}

function load(requestsPerSecond: number, p99Ms = 2): LoadResult {
  return {
    requests: requestsPerSecond * 2,
    seconds: 2,
    requestsPerSecond,
    p50Ms: 1,
    p99Ms,
    errorResponses: 0,
    socketErrors: 0,
    timeouts: 0,
  };
}

function round(before: number, after: number): Round {
  return { before: load(before), after: load(after) };
}

describe('bench --against options', () => {
  test('rounds of 2 s, 8 per order, create-webhook left out, the working tree as after; instructions on asking', () => {
    const options = parse('--against', 'de9857f');
    assert.deepEqual(options.against, {
      rev: 'de9857f',
      afterRev: undefined,
      rounds: 8,
      afterEnv: {},
      instructions: undefined,
    });
    assert.deepEqual(parse('--against', 'de9857f', '--instructions').against?.instructions, {
      samples: 9,
      requestsPerSample: 200,
      warmupRequests: 1000,
    });
    assert.equal(options.durationSeconds, 2);
    assert.ok(!options.scenarios.includes('create-webhook'));
    assert.deepEqual(options.scenarios, ['list-20', 'list-100', 'list-sold', 'get-by-id', 'create', 'mix-90-10']);
  });

  test('--quick: 2 rounds of 1 s, fewer counted requests; --rounds, --after and --duration as given', () => {
    const quick = parse('--against', 'HEAD~1', '--quick', '--instructions');
    assert.equal(quick.against?.rounds, 2);
    assert.equal(quick.durationSeconds, 1);
    assert.deepEqual(quick.against?.instructions, { samples: 3, requestsPerSample: 20, warmupRequests: 100 });
    const given = parse('--against', 'v1', '--after', 'v2', '--rounds', '12', '--duration', '3');
    assert.deepEqual(given.against, { rev: 'v1', afterRev: 'v2', rounds: 12, afterEnv: {}, instructions: undefined });
    assert.equal(given.durationSeconds, 3);
    // The same build with a setting of its own on the after side: a URL's = and : stay in the value.
    const traced = parse('--against', 'v1', '--after', 'v1', '--after-env', 'A=http://h:1/?x=y', '--after-env', 'B=');
    assert.deepEqual(traced.against?.afterEnv, { A: 'http://h:1/?x=y', B: '' });
    const counted = parse(
      '--against',
      'v1',
      '--instructions',
      '--samples',
      '7',
      '--sample-requests',
      '50',
      '--warmup-requests',
      '9',
    );
    assert.deepEqual(counted.against?.instructions, { samples: 7, requestsPerSample: 50, warmupRequests: 9 });
  });

  test('without --against: no comparison, 10 s per scenario, every scenario', () => {
    const options = parse();
    assert.equal(options.against, undefined);
    assert.equal(options.durationSeconds, 10);
    assert.ok(options.scenarios.includes('create-webhook'));
  });

  test('refused: odd rounds, --rounds or --after alone, and what cannot run side by side', () => {
    const refusals: [string[], RegExp][] = [
      [['--against', 'x', '--rounds', '7'], /--rounds must be even/],
      [['--against', 'x', '--rounds', '0'], /--rounds must be a positive integer/],
      [['--rounds', '8'], /--rounds needs --against/],
      [['--after', 'y'], /--after needs --against/],
      [['--after-env', 'A=1'], /--after-env needs --against/],
      [['--against', 'x', '--after-env', 'no-setting'], /--after-env must be NAME=VALUE/],
      [['--instructions'], /--instructions needs --against/],
      [['--samples', '3'], /--samples needs --against/],
      [['--against', 'x', '--sample-requests', '9'], /--sample-requests counts instructions: only with --instructions/],
      [['--against', 'x', '--instructions', '--warmup-requests', '0'], /--warmup-requests must be a positive integer/],
      [['--against', 'x', '--scenario', 'list-20,create-webhook'], /create-webhook needs a webhook receiver/],
      [['--against', 'x', '--redis'], /--redis would share one redis-server/],
      [['--against', 'x', '--cpu-prof', '/tmp/p'], /--cpu-prof would mix/],
    ];
    for (const [args, message] of refusals) {
      assert.throws(
        () => parseOptions(args, REPO),
        (error: unknown) => {
          assert.ok(error instanceof UsageError, `${args.join(' ')}: a UsageError`);
          assert.match(error.message, message);
          return true;
        },
      );
    }
  });
});

describe('paired ratios', () => {
  test('ABBA: the first place leads every other round, starting with the first', () => {
    assert.deepEqual([0, 1, 2, 3].map(firstPlaceLeads), [true, false, true, false]);
  });

  test("an order's ratio is the geometric mean of its rounds' after/before", () => {
    const ratio = orderRatio([round(100, 50), round(100, 200)]);
    assert.ok(Math.abs(ratio - 1) < 1e-12, `${ratio}`);
    assert.ok(Math.abs(orderRatio([round(100, 90), round(200, 180)]) - 0.9) < 1e-12);
  });

  test("a bias of the second place divides out of the two orders' estimate", () => {
    // The same speed on both sides, but whoever is second runs 10 % faster.
    const beforeFirst: Order = { first: 'before', rounds: [round(100, 110)], ratio: 1.1 };
    const afterFirst: Order = { first: 'after', rounds: [round(110, 100)], ratio: 1 / 1.1 };
    assert.ok(Math.abs(estimate([beforeFirst, afterFirst]) - 1) < 1e-12);
    assert.ok(
      Math.abs(
        estimate([
          { ...beforeFirst, ratio: 0.99 },
          { ...afterFirst, ratio: 0.9 },
        ]) - 0.9439,
      ) < 1e-4,
    );
  });

  test('the range: none when every round agrees, two standard errors of the log ratio otherwise', () => {
    const steady: Order = { first: 'before', rounds: [round(100, 90), round(50, 45)], ratio: 0.9 };
    const [low, high] = estimateRange([steady, { ...steady, first: 'after' }]);
    assert.ok(Math.abs(low - 0.9) < 1e-12 && Math.abs(high - 0.9) < 1e-12, `${low}–${high}`);
    // Log ratios ±0.1 in each order: variance 0.02 over 2 rounds, so a standard error of √(0.01 + 0.01) / 2.
    const e = Math.exp(0.1);
    const scattered: Order = { first: 'before', rounds: [round(100, 100 * e), round(100, 100 / e)], ratio: 1 };
    const [wideLow, wideHigh] = estimateRange([scattered, { ...scattered, first: 'after' }]);
    const twoErrors = 2 * (Math.sqrt(0.02) / 2);
    assert.ok(Math.abs(Math.log(wideHigh) - twoErrors) < 1e-12 && Math.abs(Math.log(wideLow) + twoErrors) < 1e-12);
  });

  test("a side's figures: mean req/s, median p99, errors summed", () => {
    const figures = sideFigures([load(100, 1), { ...load(200, 5), socketErrors: 2 }, { ...load(300, 3), timeouts: 1 }]);
    assert.deepEqual(figures, { requestsPerSecond: 200, p99Ms: 3, errors: 3 });
  });

  test('a problem for an estimate below 0.97 and for errors on either side, none otherwise', () => {
    const scenario = (name: string, ratio: number, afterErrors: number) => ({
      name,
      description: name,
      before: { requestsPerSecond: 100, p99Ms: 2, errors: 0 },
      after: { requestsPerSecond: 100 * ratio, p99Ms: 2, errors: afterErrors },
      orders: [],
      estimate: ratio,
      range: [ratio * 0.95, ratio * 1.05] as const,
      slower: ratio < 0.97,
    });
    const comparison: StoreComparison = {
      store: 'sqlite',
      seeded: { pets: 10, byStatus: { available: 10 }, seconds: 0 },
      scenarios: [scenario('list-20', 0.969, 0), scenario('create', 0.97, 4), scenario('get-by-id', 1.2, 0)],
    };
    assert.deepEqual(comparisonProblems(comparison), [
      'sqlite list-20: after/before 0.969 (±2 SE 0.92–1.02), more than 3 % slower',
      'sqlite create: 4 errors (≥ 400, socket, timeout) after',
    ]);
  });
});

describe('instructions per request', () => {
  test("a dump's count is its totals line", () => {
    const dump = 'version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 0\ntotals: 421129624\n';
    assert.equal(dumpTotal(dump), 421_129_624);
    assert.equal(dumpTotal('events: Ir\nsummary: 1234\n'), 1234);
    assert.throws(() => dumpTotal('events: Ir\n'), /no totals line/);
  });

  test('the same seed draws the same requests for both builds', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    assert.deepEqual(draw(3), draw(3));
    assert.notDeepEqual(draw(3), draw(4));
    assert.ok(draw(1).every((value) => value >= 0 && value < 1));
  });

  test("after/before is the median of the samples' paired ratios, sample i of one build against sample i of the other", () => {
    const count = (samples: number[]): InstructionCount => ({ samples, median: 0, errors: 0 });
    // Medians alone would give 110 / 100; paired, the windows are 1.2, 1.1, 1.0, 1.1 and 1.05.
    const before = count([100, 100, 100, 90, 200]);
    const after = count([120, 110, 100, 99, 210]);
    assert.ok(Math.abs(pairedRatio(before, after) - 1.1) < 1e-12);
  });

  test('under the count the service runs no interval, and collects garbage when asked', async (t) => {
    const ack = join(tempDir(t), 'gc-ack');
    const wrapper = callgrindWrapper('unused.out', 'unused.log', gcAckFileIn(ack));
    const script = `
      let ticks = 0;
      setInterval(() => ticks++, 5);
      require('node:timers').setInterval(() => ticks++, 5);
      setTimeout(() => {
        process.kill(process.pid, 'SIGUSR2');
        setTimeout(() => { console.log(ticks); process.exit(0); }, 200);
      }, 300);`;
    const { stdout } = await promisify(execFile)(process.execPath, [...wrapper.nodeFlags, '-e', script], {
      env: { ...process.env, ...wrapper.env },
    });
    assert.equal(stdout.trim(), '0');
    assert.equal(readFileSync(ack, 'utf8'), '.');
  });

  const counted = (median: number, errors = 0): InstructionCount => ({ samples: [median], median, errors });
  const scenario = (name: string, estimate: number, ratio: number, afterErrors = 0): ScenarioComparison => ({
    name,
    description: name,
    before: { requestsPerSecond: 100, p99Ms: 2, errors: 0 },
    after: { requestsPerSecond: 100 * estimate, p99Ms: 2, errors: 0 },
    orders: [],
    estimate,
    range: [estimate * 0.95, estimate * 1.05] as const,
    instructions: { before: counted(100_000), after: counted(100_000 * ratio, afterErrors), ratio },
    slower: ratio > 1.03,
  });

  test('when counted, instructions decide: above 1.03 is a problem, a req/s estimate below 0.97 is not', () => {
    const comparison: StoreComparison = {
      store: 'postgres',
      seeded: { pets: 10, byStatus: { available: 10 }, seconds: 0 },
      scenarios: [scenario('list-20', 1, 1.031), scenario('get-by-id', 0.9, 1.03), scenario('create', 1, 1, 2)],
    };
    assert.deepEqual(comparisonProblems(comparison), [
      'postgres list-20: after/before instructions per request 1.031, more than 3 % more instructions',
      'postgres create: 2 responses ≥ 400 while counting instructions after',
    ]);
  });
});

test('a revision that does not exist fails before anything is written', async (t) => {
  const dir = join(tempDir(t), 'revision');
  await assert.rejects(buildRevision('no-such-revision-4f1c', REPO, dir), /no-such-revision-4f1c/);
  assert.equal(existsSync(dir), false);
});
