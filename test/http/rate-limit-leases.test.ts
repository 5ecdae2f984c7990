import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import autocannon from 'autocannon';
import type { Rate } from '../../src/domain/token-bucket.js';
import type { RateLimiter } from '../../src/rate-limit/rate-limiter.js';
import type { CallResult } from '../helpers/calls.js';
import { failUntilRefused } from '../helpers/failed-authentication.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { commandsRun, privateRedis, redisLimiter } from '../helpers/redis.js';
import { BACKENDS } from '../helpers/stores.js';

const backend = BACKENDS[0] as (typeof BACKENDS)[number];

interface Hammered {
  /** Answers by status. */
  readonly statuses: Map<number, number>;
  /** The last answer of each status, for its headers. */
  readonly last: Map<number, CallResult>;
  readonly seconds: number;
}

/** One key sending GET /v1/pets without pause, `connections` at a time to each instance, for `ms`. */
async function hammer(instances: Harness[], connections: number, ms: number): Promise<Hammered> {
  const statuses = new Map<number, number>();
  const last = new Map<number, CallResult>();
  const started = performance.now();
  const loop = async (h: Harness) => {
    while (performance.now() - started < ms) {
      const result = await h.call('GET', '/v1/pets');
      statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
      last.set(result.status, result);
    }
  };
  await Promise.all(instances.flatMap((h) => Array.from({ length: connections }, () => loop(h))));
  return { statuses, last, seconds: (performance.now() - started) / 1000 };
}

/** Blocks this process's event loop for `ms`. */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Requests the instances let through because Redis did not answer in time (fail open), from /metrics. */
async function failedOpen(instances: Harness[]): Promise<number> {
  let sum = 0;
  for (const instance of instances) {
    const text = (await instance.call('GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith('petstore_rate_limit_fail_open_total '));
    sum += Number(line?.split(' ')[1] ?? 0);
  }
  return sum;
}

/**
 * Holds the limit to RPS × 5 s + BURST, within 10 %. Requests Redis did not judge in time pass unlimited by
 * design (the service fails open), so they cannot count for or against it: those judged must not exceed
 * the limit, and all those let through must reach `atLeast` of it (a client that stops asking while the
 * bucket is full loses the refills meanwhile).
 */
function assertLimitHeld(t: TestContext, rate: Rate, hammered: Hammered, unjudged: number, atLeast = 0.9): void {
  const { statuses, last, seconds } = hammered;
  const allowed = statuses.get(200) ?? 0;
  const refused = statuses.get(429) ?? 0;
  const expected = rate.perSecond * 5 + rate.burst;
  t.diagnostic(
    `allowed ${allowed}, refused ${refused} in ${seconds.toFixed(2)} s; expected ${expected} ± 10 %; ` +
      `${unjudged} let through unjudged`,
  );
  assert.deepEqual([...statuses.keys()].sort(), [200, 429], 'every answer is 200 or 429');
  assert.ok(allowed - unjudged <= expected * 1.1, `allowed ${allowed - unjudged} judged, expected ${expected} + 10 %`);
  assert.ok(allowed >= expected * atLeast, `allowed ${allowed}, expected at least ${atLeast} of ${expected}`);
  const ok = last.get(200);
  const tooMany = last.get(429);
  assert.ok(ok && tooMany);
  assert.equal(ok.headers.get('ratelimit-policy'), `"default";q=${rate.burst};w=1`);
  assert.match(ok.headers.get('ratelimit') ?? '', /^"default";r=([0-9]|1[0-9]|20);t=[01]$/);
  assert.equal(tooMany.headers.get('retry-after'), '1');
  assert.match(tooMany.headers.get('ratelimit') ?? '', /^"default";r=0;t=1$/);
}

describe('Redis limits without a Redis call per request', () => {
  // A rate this process offers several times over even on a slow, busy machine (in the full suite on two
  // cores it offered only 52-60/s, under the 50/s this test used to ask): the test is of the limit, not of
  // how fast fetch goes.
  const rate: Rate = { perSecond: 20, burst: 20 };

  /** Two instances sharing one Redis, warmed up on another key (a cold start would miss part of the burst). */
  async function twoInstances(t: TestContext): Promise<Harness[]> {
    const prefix = `petstore-test:${randomBytes(4).toString('hex')}:`;
    const h = await startHarness(t, backend, { rateLimit: () => ({ limiter: redisLimiter(t, prefix), perKey: rate }) });
    const instances = [h, await h.startInstance()];
    for (const instance of instances) {
      for (let i = 0; i < 100; i++) await instance.call('GET', '/v1/pets', { key: h.keys.read });
    }
    return instances;
  }

  test('two instances hammering one key get RPS × 5 s + BURST, within 10 %', async (t) => {
    const instances = await twoInstances(t);
    const hammered = await hammer(instances, 8, 5000);
    assertLimitHeld(t, rate, hammered, await failedOpen(instances));
  });

  test('a stalling event loop does not turn the limit off', async (t) => {
    const instances = await twoInstances(t);
    // Every 0.7 s the process blocks for 0.3 s in a setImmediate, after which its timers run before it reads
    // the answers that came in meanwhile: with a plain timer every Redis call then in flight timed out, the
    // circuit opened, and 900-1,000 requests in 5 s passed unjudged.
    const stalls = setInterval(() => setImmediate(() => busyFor(300)), 700);
    const hammered = await hammer(instances, 8, 5000);
    clearInterval(stalls);
    const unjudged = await failedOpen(instances);
    // The stalls stop the test's own clients too: beside a CPU hog a stall and the wait after it left the
    // bucket full for over a second once (107 allowed of 120), so a quarter may go unasked here.
    assertLimitHeld(t, rate, hammered, unjudged, 0.75);
    // A few may pass unjudged where the machine starves Redis itself past the time-out (6 once, in a full run
    // on two cores): fail-open is by design then. Without the fix it was 900-1,000.
    assert.ok(unjudged < 50, `${unjudged} let through unjudged`);
  });

  test('at a steady high rate one key costs Redis commands by the second, not by the request', async (t) => {
    const redis = await privateRedis(t);
    const rate: Rate = { perSecond: 100_000, burst: 100_000 };
    const h = await startHarness(t, backend, {
      rateLimit: () => ({ limiter: redisLimiter(t, 'steady:', redis.url), perKey: rate }),
    });
    const instances = [h, await h.startInstance()];
    // autocannon, not fetch: a rate this process can only reach with a lighter client.
    const load = (seconds: number) =>
      Promise.all(
        instances.map(({ url }) =>
          autocannon({
            url: `${url}/v1/pets`,
            connections: 8,
            duration: seconds,
            headers: { authorization: `Bearer ${h.keys.all}` },
          }),
        ),
      );
    await load(1);
    const before = await commandsRun(redis.url);
    const results = await load(3);
    const commands = (await commandsRun(redis.url)) - before;
    const requests = results.reduce((sum, result) => sum + result['2xx'], 0);
    const perRequest = commands / requests;
    t.diagnostic(
      `${requests} requests (${(requests / 3).toFixed(0)}/s over two instances), ${commands} Redis commands: ` +
        `${perRequest.toFixed(4)} per request`,
    );
    assert.equal(
      results.reduce((sum, result) => sum + result.non2xx + result.errors, 0),
      0,
      'the limit is never reached',
    );
    // Per instance at most 4 lease calls a second (a lease covers 0.25 s of demand) and 2 sweeps, 5 commands
    // each: 30 a second however many requests pass. A count per request would depend on how fast this
    // process can send, which a busy machine halves; a call per request would cost 5 commands per request.
    assert.ok(commands <= 3 * instances.length * 30, `${commands} Redis commands in 3 s`);
  });
  test('failed authentications from one address are one limit across two instances', async (t) => {
    const prefix = `petstore-test:${randomBytes(4).toString('hex')}:`;
    const h = await startHarness(t, backend, {
      rateLimit: () => ({ limiter: redisLimiter(t, prefix), perKey: { perSecond: 100, burst: 200 } }),
    });
    const other = await h.startInstance();
    // Alternating instances: twenty failures in all, then one a second. On a loaded machine twenty requests
    // can take over a second, so no more may pass than twenty plus the refills of the time taken (two
    // separate limits would let forty through).
    const answer = await failUntilRefused((i) => (i % 2 ? other : h).call('GET', '/v1/pets', { key: null }));
    assert.equal(answer.status, 429);
    assert.equal((await other.call('GET', '/v1/pets')).status, 200, 'a valid key from that address passes');
  });
});

/** Takes `count` tokens at once (in one event-loop turn); the number allowed. */
async function burst(limiter: RateLimiter, bucket: string, rate: Rate, count: number): Promise<number> {
  const decisions = await Promise.all(Array.from({ length: count }, () => limiter.take(bucket, rate, 1)));
  assert.ok(decisions.every((decision) => decision.outcome !== 'unknown'));
  return decisions.filter((decision) => decision.outcome === 'allowed').length;
}

describe('leases', () => {
  // A lease holds up to a tenth of the burst (10) and a quarter second of the recent rate.
  const rate: Rate = { perSecond: 40, burst: 100 };

  test('the requests of one event-loop turn share one Redis call', async (t) => {
    const redis = await privateRedis(t);
    const limiter = redisLimiter(t, 'turn:', redis.url);
    await limiter.ready();
    await limiter.take('warm', rate, 1);
    const before = await commandsRun(redis.url);
    assert.equal(await burst(limiter, 'key:a', rate, 150), 100);
    // The script and the four commands it runs: TIME, HGETALL, HSET, PEXPIRE.
    assert.equal((await commandsRun(redis.url)) - before, 5);
  });

  // Both instances on one clock the test moves, so the gaps the leases are sized by are exact however
  // busy the machine is (with real time, a 5 ms gap that took 50 ms sized a smaller lease).
  function onOneClock(t: TestContext) {
    const clock = { ms: 0 };
    const prefix = `petstore-test:${randomBytes(4).toString('hex')}:`;
    const make = () => redisLimiter(t, prefix, undefined, () => clock.ms);
    return { clock, a: make(), b: make() };
  }

  test('a lease held by one instance counts against the burst of the others', async (t) => {
    const { clock, a, b } = onOneClock(t);
    await Promise.all([a.ready(), b.ready()]);
    // Two takes 5 ms apart: the second leases a tenth of the burst, of which one is spent.
    assert.equal(await burst(a, 'key:x', rate, 1), 1);
    clock.ms += 5;
    assert.equal(await burst(a, 'key:x', rate, 1), 1);
    // The shared bucket refills to full meanwhile; full is the burst less what a still holds.
    clock.ms += 400;
    const fromB = await burst(b, 'key:x', rate, 150);
    const fromA = await burst(a, 'key:x', rate, 150);
    t.diagnostic(`at once: ${fromB} from the shared bucket, then ${fromA} from a's lease and the bucket`);
    assert.ok(fromB <= rate.burst - 9 + 1, `b got ${fromB}: the 9 tokens a keeps are not in the bucket`);
    assert.ok(fromA >= 9, `a spends the 9 left of its lease (${fromA})`);
    assert.ok(fromA + fromB <= rate.burst + 1, `${fromA} + ${fromB} allowed at once, burst ${rate.burst}`);
  });

  test('a closing instance gives its lease back', async (t) => {
    const { clock, a, b } = onOneClock(t);
    await Promise.all([a.ready(), b.ready()]);
    await burst(a, 'key:y', rate, 1);
    clock.ms += 5;
    await burst(a, 'key:y', rate, 1);
    const drained = await burst(b, 'key:y', rate, 150);
    await a.close();
    // Past the wait b keeps after finding the bucket dry (it does not hear of what comes back before).
    clock.ms += 60;
    const after = await burst(b, 'key:y', rate, 150);
    t.diagnostic(`b drained ${drained}, then got ${after} once a closed`);
    // The 9 a held, and 60 ms of refill at 40 a second (2.4).
    assert.ok(after >= 9 && after <= 9 + 3, `the 9 tokens a held, and what refilled: ${after}`);
  });
});
