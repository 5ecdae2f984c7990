/**
 * Hostile input, property-based (fast-check), on every store backend.
 *
 * Requests are derived from the service's own OpenAPI document (GET /v1/openapi.json): its operations,
 * path, query and header parameters (Idempotency-Key) and body schemas (NewPet, NewOrder,
 * OrderStatusChange); some are sent twice, as a retrying client would. They are then mutated:
 * wrong types, missing and extra fields, `__proto__`/`constructor`/`prototype` keys, control characters and
 * lone surrogates, int64 edge literals, deep nesting, bodies near and over the 64 KiB limit, odd
 * content types, duplicate and unknown query parameters, odd percent-encodings, malformed cursors and
 * Authorization headers. What fetch will not send (dot segments, bad header bytes, huge headers, unknown
 * methods) goes over a raw HTTP/1.1 socket.
 *
 * For every generated request: never a 5xx; an Error body (exactly code/message/status, status equal to
 * the HTTP status, code from the table, application/json) whenever the status is 400 or more; after every
 * batch the process answers /healthz, and the store equals the store before the batch plus the effect
 * of the batch's successful POST/PATCH requests, replays excepted (so a refused request changed nothing);
 * a request whose answer docs/decisions/order-of-checks.md fixes whatever else is wrong gets it (401 first, then 403, 415, 413).
 * A request Node's HTTP parser refuses before the app sees it may also be answered by closing the
 * connection, but whatever answer it gets is no 5xx and, when it is an error, the Error body
 * (docs/decisions/slow-clients.md: "malformed HTTP gets a 400 Error body").
 *
 * The suite is one folder: the tests, grouped by what they attack, in `*.test.ts` (each runs on every
 * backend under `hostile input [<backend>]`); the transport (transport.ts, raw-http-client.ts,
 * response-parser.ts), the oracle that judges every answer and the store (oracle.ts), the generators
 * (*-generators.ts, operation-requests.ts, raw-requests.ts), and this module, which runs batches. The tests
 * of paths.test.ts, raw-http.test.ts (no Host) and json-bodies.test.ts (not UTF-8) pin cases found by
 * earlier runs of this suite.
 *
 * The seed is fixed (HOSTILE_SEED overrides it) and printed, so a failure reproduces exactly;
 * HOSTILE_SCALE multiplies the number of runs.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext } from 'node:test';
import fc from 'fast-check';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { type Operation, operationsOf, type Schema } from './openapi-operations.js';
import { applyEffect, checkResponse, type Snapshot, snapshot } from './oracle.js';
import { Counter, type HostileRequest, summary } from './requests.js';
import { SEED } from './settings.js';
import { send } from './transport.js';

export interface World {
  readonly h: Harness;
  readonly doc: Schema;
  readonly operations: readonly Operation[];
  /** Cursors the service issued: pets and orders, with and without a status filter. */
  readonly cursors: readonly string[];
  readonly counter: Counter;
  known: Snapshot | undefined;
}

export async function createWorld(t: TestContext, backend: StoreBackend): Promise<World> {
  const h = await startHarness(t, backend);
  const counter = new Counter();
  const openapi = await h.call('GET', '/v1/openapi.json', { key: null });
  assert.equal(openapi.status, 200);
  const doc = openapi.json;
  const operations = operationsOf(doc);
  const ids = operations.map((operation) => operation.id).sort();
  for (const id of ['createPet', 'getPet', 'listPets', 'listOrders', 'placeOrder', 'changeOrderStatus']) {
    assert.ok(ids.includes(id), `the OpenAPI document lacks ${id}: ${ids.join()}`);
  }
  // Some state for the requests to hit: pets in each status, orders in several, pages to have cursors for.
  const pets = await h.createPets(6, (i) => ({
    name: `seed-${i}`,
    categoryId: i + 1,
    status: i === 4 ? 'pending' : i === 5 ? 'sold' : 'available',
  }));
  for (const [index, moves] of [
    [0, []],
    [1, ['approved']],
  ] as const) {
    const order = await h.call('POST', '/v1/store/orders', { body: { petId: pets[index].id } });
    assert.equal(order.status, 201, order.text);
    for (const status of moves) {
      assert.equal((await h.call('PATCH', `/v1/store/orders/${order.json.id}`, { body: { status } })).status, 200);
    }
  }
  const cursors: string[] = [];
  for (const list of ['/v1/pets?limit=1', '/v1/pets?limit=1&status=available', '/v1/store/orders?limit=1']) {
    const link = (await h.call('GET', list)).headers.get('link') ?? '';
    const cursor = /[?&]cursor=([^&>]+)/.exec(link)?.[1];
    assert.ok(cursor !== undefined, `no next link on ${list}: ${link}`);
    cursors.push(decodeURIComponent(cursor));
  }
  return { h, doc, operations, cursors, counter, known: undefined };
}

/** Sends a batch, checks every answer, then that the process is up and the store changed only as the successes say. */
export async function runBatch(world: World, batch: readonly HostileRequest[]): Promise<void> {
  const { h, counter } = world;
  const before = world.known ?? (await snapshot(h, counter));
  world.known = undefined;
  let expected = before;
  for (const request of batch) {
    const response = await send(h.url, request, counter);
    counter.record(response);
    checkResponse(request, response);
    expected = applyEffect(expected, request, response);
  }
  counter.total++;
  const health = await h.call('GET', '/healthz', { key: null });
  assert.equal(health.status, 200, `the process stopped answering after: ${batch.map(summary).join('\n')}`);
  const after = await snapshot(h, counter);
  assert.deepEqual(after, expected, `the store changed beyond the successes of:\n${batch.map(summary).join('\n')}`);
  world.known = after;
}

export async function property(
  t: TestContext,
  world: World,
  offset: number,
  numRuns: number,
  batch: fc.Arbitrary<HostileRequest[]>,
  options: { endOnFailure?: boolean } = {},
): Promise<void> {
  const seed = SEED + offset;
  const start = { generated: world.counter.generated, total: world.counter.total, at: Date.now() };
  world.counter.outcomes.clear();
  t.diagnostic(`fast-check seed ${seed} (HOSTILE_SEED=${SEED}), ${numRuns} runs`);
  try {
    await fc.assert(
      fc.asyncProperty(batch, (requests) => runBatch(world, requests)),
      { seed, numRuns, includeErrorInReport: true, ...options },
    );
  } finally {
    t.diagnostic(
      `${world.counter.generated - start.generated} generated requests, ` +
        `${world.counter.total - start.total} HTTP requests in all, ${Date.now() - start.at} ms; answers: ` +
        [...world.counter.outcomes]
          .sort()
          .map(([status, n]) => `${status}×${n}`)
          .join(' '),
    );
  }
}

/** One backend's `hostile input [<backend>]` suite: a fresh world per test, and the requests of its tests added up. */
export interface HostileSuite {
  readonly backend: StoreBackend;
  /** A harness with seeded pets and orders for this test; its requests count towards `totals` when the test ends. */
  world(t: TestContext): Promise<World>;
  readonly totals: Counter;
}

/** Declares the suite `hostile input [<backend>]` once per store backend (a missing backend shows as skipped). */
export function hostileSuite(fn: (suite: HostileSuite) => void): void {
  eachBackend((backend) => {
    describe(`hostile input [${backend.name}]`, () => {
      const totals = new Counter();
      const world = async (t: TestContext) => {
        const created = await createWorld(t, backend);
        const counter = created.counter;
        t.after(() => {
          totals.generated += counter.generated;
          totals.total += counter.total;
        });
        return created;
      };
      fn({ backend, world, totals });
    });
  });
}
