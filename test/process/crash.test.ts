import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { createKey } from '../../dev/petstore-cli.js';
import { request } from '../helpers/calls.js';
import { cliEnv, freshDatabaseUrl, type ServeProcess, startServe } from '../helpers/process.js';
import { eachBackend } from '../helpers/stores.js';

/**
 * Process-level durability and shutdown: real `serve` processes killed with SIGKILL or stopped with
 * SIGTERM while ~32 clients write at full speed, then restarted on the same database and inspected
 * through the API alone.
 */

const LOOPS = 32;
const CRASH_ROUNDS = 3;
/** Available pets made before each crash round, so the order loops have something to reserve at once. */
const SEEDED_PER_ROUND = 100;

type PetStatus = 'available' | 'pending' | 'sold';

interface PetBody {
  readonly name: string;
  readonly categoryId: number;
  readonly status: PetStatus;
}

interface Pet extends PetBody {
  readonly id: number;
}

interface Order {
  readonly id: number;
  readonly petId: number;
  readonly quantity: number;
  readonly status: string;
  readonly createdAt: string;
  readonly complete: boolean;
}

/** What one request came to: a whole answer, an answer whose body broke off, or no answer at all. */
type Outcome =
  | { readonly kind: 'answered'; readonly status: number; readonly text: string; readonly json: any; headers: Headers }
  | { readonly kind: 'cut'; readonly status: number; readonly error: string }
  | { readonly kind: 'none'; readonly error: string };

function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** One request, keeping apart "no response", "response cut mid-body" and a whole response. */
async function attempt(url: string, method: string, path: string, key: string, body?: unknown): Promise<Outcome> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url + path, {
      method,
      headers,
      signal: AbortSignal.timeout(15_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    return { kind: 'none', error: describeError(error) };
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    return { kind: 'cut', status: response.status, error: describeError(error) };
  }
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { kind: 'answered', status: response.status, text, json, headers: response.headers };
}

/** Every item of a list, following `Link: rel="next"` to the end. */
async function everything<T>(url: string, key: string, path: string): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined = `${path}?limit=100`;
  while (next !== undefined) {
    const page = await request(url, 'GET', next, { key });
    assert.equal(page.status, 200, `GET ${next}: ${page.text}`);
    items.push(...(page.json as T[]));
    next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return items;
}

function randomBetween(low: number, high: number): number {
  return low + Math.floor(Math.random() * (high - low + 1));
}

/** Everything the clients sent and everything the server acknowledged, over every round on one database. */
interface Ledger {
  /** Every pet sent for creation (by the seeding or the loops), by its unique name. */
  readonly sentPets: Map<string, PetBody>;
  /** Every order sent: pet id → quantity. Each pet is ordered by one request at most. */
  readonly sentOrders: Map<number, number>;
  /** Pets acknowledged with 201, as acknowledged, by id. */
  readonly ackedPets: Map<number, Pet>;
  /** Orders acknowledged with 201, as acknowledged, by id. */
  readonly ackedOrders: Map<number, Order>;
  /** Acknowledged available pets no order has been sent for yet. */
  readonly pool: number[];
}

/** The problems found in the restarted store against the ledger; empty when every check holds. */
function audit(ledger: Ledger, pets: Pet[], orders: Order[]): string[] {
  const problems: string[] = [];
  const petsById = new Map<number, Pet>();
  const namesSeen = new Set<string>();
  for (const pet of pets) {
    if (petsById.has(pet.id)) problems.push(`pet id ${pet.id} listed twice`);
    petsById.set(pet.id, pet);
    if (namesSeen.has(pet.name)) problems.push(`pet name ${JSON.stringify(pet.name)} stored more than once`);
    namesSeen.add(pet.name);
  }
  const ordersById = new Map<number, Order>();
  const orderByPet = new Map<number, Order>();
  for (const order of orders) {
    if (ordersById.has(order.id)) problems.push(`order id ${order.id} listed twice`);
    ordersById.set(order.id, order);
    const other = orderByPet.get(order.petId);
    if (other !== undefined) problems.push(`pet ${order.petId} has two orders: ${other.id} and ${order.id}`);
    orderByPet.set(order.petId, order);
  }

  // Every acknowledged write is there, exactly as acknowledged.
  for (const acked of ledger.ackedPets.values()) {
    const stored = petsById.get(acked.id);
    if (stored === undefined) {
      problems.push(`acknowledged pet lost: ${JSON.stringify(acked)}`);
      continue;
    }
    const status = acked.status === 'available' && orderByPet.has(acked.id) ? 'pending' : acked.status;
    const expected = { ...acked, status };
    if (!isDeepStrictEqual(stored, expected)) {
      problems.push(`acknowledged pet changed: ${JSON.stringify(expected)} is now ${JSON.stringify(stored)}`);
    }
  }
  for (const acked of ledger.ackedOrders.values()) {
    const stored = ordersById.get(acked.id);
    if (stored === undefined) {
      problems.push(`acknowledged order lost: ${JSON.stringify(acked)}`);
      continue;
    }
    if (!isDeepStrictEqual(stored, acked)) {
      problems.push(`acknowledged order changed: ${JSON.stringify(acked)} is now ${JSON.stringify(stored)}`);
    }
  }

  // Whatever is there, acknowledged or not, is whole.
  for (const pet of pets) {
    const sent = ledger.sentPets.get(pet.name);
    if (sent === undefined) {
      problems.push(`pet nobody sent: ${JSON.stringify(pet)}`);
      continue;
    }
    if (pet.categoryId !== sent.categoryId) {
      problems.push(`pet ${pet.id} has categoryId ${pet.categoryId}, sent ${sent.categoryId}`);
    }
    const ordered = orderByPet.has(pet.id);
    if (sent.status === 'available') {
      const expected = ordered ? 'pending' : 'available';
      if (pet.status !== expected) {
        problems.push(
          `pet ${pet.id} (${pet.name}) created available is ${pet.status} with ${ordered ? 'an' : 'no'} order` +
            ` (expected ${expected})`,
        );
      }
    } else if (pet.status !== sent.status) {
      problems.push(`pet ${pet.id} (${pet.name}) created ${sent.status} is ${pet.status}`);
    }
  }
  for (const order of orders) {
    const quantity = ledger.sentOrders.get(order.petId);
    if (quantity === undefined) problems.push(`order nobody sent: ${JSON.stringify(order)}`);
    else if (order.quantity !== quantity)
      problems.push(`order ${order.id} has quantity ${order.quantity}, sent ${quantity}`);
    if (order.status !== 'placed' || order.complete !== false) {
      problems.push(`order ${order.id} is ${order.status}/complete=${order.complete}, expected placed`);
    }
    const pet = petsById.get(order.petId);
    if (pet === undefined) problems.push(`order ${order.id} for pet ${order.petId}, which is not stored`);
    else if (pet.status !== 'pending') problems.push(`order ${order.id} for pet ${pet.id}, which is ${pet.status}`);
  }
  return problems;
}

/** A few acknowledged writes read back one by one, through getPet and getOrder. */
async function spotCheck(url: string, key: string, ledger: Ledger, orders: Order[]): Promise<void> {
  const orderedPets = new Set(orders.map((order) => order.petId));
  const pets = [...ledger.ackedPets.values()].sort(() => Math.random() - 0.5).slice(0, 25);
  for (const acked of pets) {
    const result = await request(url, 'GET', `/v1/pets/${acked.id}`, { key });
    assert.equal(result.status, 200, `GET /v1/pets/${acked.id}: ${result.text}`);
    const status = acked.status === 'available' && orderedPets.has(acked.id) ? 'pending' : acked.status;
    assert.deepEqual(result.json, { ...acked, status });
  }
  const acked = [...ledger.ackedOrders.values()].sort(() => Math.random() - 0.5).slice(0, 25);
  for (const order of acked) {
    const result = await request(url, 'GET', `/v1/store/orders/${order.id}`, { key });
    assert.equal(result.status, 200, `GET /v1/store/orders/${order.id}: ${result.text}`);
    assert.deepEqual(result.json, order);
  }
}

/** Creates available pets (all must succeed) and puts them in the pool for the order loops. */
async function seed(url: string, key: string, ledger: Ledger, round: number): Promise<void> {
  const bodies = Array.from({ length: SEEDED_PER_ROUND }, (_, i): PetBody => {
    return { name: `seed-r${round}-${i}`, categoryId: 1 + (i % 9), status: 'available' };
  });
  for (const body of bodies) ledger.sentPets.set(body.name, body);
  for (let start = 0; start < bodies.length; start += LOOPS) {
    const results = await Promise.all(
      bodies.slice(start, start + LOOPS).map((body) => request(url, 'POST', '/v1/pets', { key, body })),
    );
    for (const result of results) {
      assert.equal(result.status, 201, result.text);
      const pet = result.json as Pet;
      ledger.ackedPets.set(pet.id, pet);
      ledger.pool.push(pet.id);
    }
  }
}

interface RoundTally {
  ackedPets: number;
  ackedOrders: number;
  noAnswer: number;
  cut: number;
  unexpected: string[];
}

/**
 * 32 loops of creates and orders at full speed until `stopped()`; each order reserves a pool pet no
 * other request names. Acknowledged writes go into the ledger; an available pet acknowledged by a
 * create joins the pool.
 */
async function writeLoops(url: string, key: string, ledger: Ledger, round: number, stopped: () => boolean) {
  const tally: RoundTally = { ackedPets: 0, ackedOrders: 0, noAnswer: 0, cut: 0, unexpected: [] };
  const loop = async (loop: number) => {
    for (let i = 0; !stopped(); i++) {
      const petId = Math.random() < 0.5 ? ledger.pool.pop() : undefined;
      if (petId !== undefined) {
        const quantity = 1 + (i % 5);
        ledger.sentOrders.set(petId, quantity);
        const outcome = await attempt(url, 'POST', '/v1/store/orders', key, { petId, quantity });
        if (outcome.kind === 'none') tally.noAnswer++;
        else if (outcome.kind === 'cut') tally.cut++;
        else if (outcome.status !== 201)
          tally.unexpected.push(`order for pet ${petId}: ${outcome.status} ${outcome.text}`);
        else {
          const order = outcome.json as Order;
          if (order.petId !== petId || order.quantity !== quantity || order.status !== 'placed') {
            tally.unexpected.push(`order for pet ${petId} x${quantity} answered ${outcome.text}`);
          }
          ledger.ackedOrders.set(order.id, order);
          tally.ackedOrders++;
        }
      } else {
        const roll = Math.random();
        const status: PetStatus = roll < 0.7 ? 'available' : roll < 0.85 ? 'pending' : 'sold';
        const body: PetBody = { name: `crash-r${round}-l${loop}-${i}`, categoryId: 1 + ((loop + i) % 13), status };
        ledger.sentPets.set(body.name, body);
        const outcome = await attempt(url, 'POST', '/v1/pets', key, body);
        if (outcome.kind === 'none') tally.noAnswer++;
        else if (outcome.kind === 'cut') tally.cut++;
        else if (outcome.status !== 201)
          tally.unexpected.push(`create ${body.name}: ${outcome.status} ${outcome.text}`);
        else {
          const pet = outcome.json as Pet;
          if (!isDeepStrictEqual(pet, { id: pet.id, ...body }) || !Number.isSafeInteger(pet.id)) {
            tally.unexpected.push(`create ${body.name} answered ${outcome.text}`);
          }
          ledger.ackedPets.set(pet.id, pet);
          tally.ackedPets++;
          if (pet.status === 'available') ledger.pool.push(pet.id);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: LOOPS }, (_, i) => loop(i)));
  return tally;
}

function emptyLedger(): Ledger {
  return { sentPets: new Map(), sentOrders: new Map(), ackedPets: new Map(), ackedOrders: new Map(), pool: [] };
}

/** The worker processes of a `serve --workers N` primary. */
function workerPids(server: ServeProcess): number[] {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.child.pid)], { encoding: 'utf8' });
  return out.split('\n').filter(Boolean).map(Number);
}

/** What the SIGTERM test's clients saw. */
interface StopTally {
  readonly created: Pet[];
  readonly sent: Map<string, PetBody>;
  ok: number;
  okAfterTerm: number;
  /** 2xx answers completed after SIGTERM that invited the client to keep the connection open. */
  keptAliveAfterTerm: number;
  unavailable: number;
  resets: Map<string, number>;
  problems: string[];
}

eachBackend((backend) => {
  describe(`crashes and stops under load [${backend.name}]`, () => {
    test('SIGKILL mid-write: every acknowledged write survives, nothing is half-present', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      let server: ServeProcess = await startServe(t, env);
      const key = await createKey(env, 'crash');
      const ledger = emptyLedger();
      for (let round = 1; round <= CRASH_ROUNDS; round++) {
        await seed(server.url, key, ledger, round);
        let stopped = false;
        const loops = writeLoops(server.url, key, ledger, round, () => stopped);
        const delay = randomBetween(300, 800);
        await sleep(delay);
        server.child.kill('SIGKILL');
        const exit = await server.exit;
        stopped = true;
        const tally = await loops;
        assert.deepEqual(exit, { code: null, signal: 'SIGKILL' }, 'the server died by SIGKILL');

        server = await startServe(t, env);
        const pets = await everything<Pet>(server.url, key, '/v1/pets');
        const orders = await everything<Order>(server.url, key, '/v1/store/orders');
        const problems = audit(ledger, pets, orders);
        t.diagnostic(
          `round ${round}: killed after ${delay} ms; acknowledged this round ${tally.ackedPets} creates + ` +
            `${tally.ackedOrders} orders; cumulative acknowledged checked ${ledger.ackedPets.size} pets + ` +
            `${ledger.ackedOrders.size} orders (store holds ${pets.length} pets, ${orders.length} orders); ` +
            `no answer ${tally.noAnswer}, cut mid-body ${tally.cut}`,
        );
        assert.deepEqual(tally.unexpected, [], 'every answer before the kill was a 201 matching the request');
        assert.ok(tally.ackedPets + tally.ackedOrders > 0, 'some writes were acknowledged before the kill');
        assert.deepEqual(problems.slice(0, 20), [], `${problems.length} durability/consistency problems`);
        await spotCheck(server.url, key, ledger, orders);
      }
      assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
    });

    test('serve --workers 2, SIGKILL of a worker, then of the primary, mid-write: no acknowledged write lost', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const key = await createKey(env, 'crash-workers');
      const ledger = emptyLedger();
      let server = await startServe(t, env, 45_000, ['--workers', '2']);
      for (const [round, victim] of [
        [1, 'worker'],
        [2, 'primary'],
      ] as const) {
        await seed(server.url, key, ledger, round);
        let stopped = false;
        const loops = writeLoops(server.url, key, ledger, round, () => stopped);
        const delay = randomBetween(300, 800);
        await sleep(delay);
        if (victim === 'worker') {
          // Killed maybe in its turn to write, or mid-commit: the other worker must go on writing.
          process.kill(workerPids(server)[0] as number, 'SIGKILL');
          await sleep(500);
        } else {
          // Its workers exit as soon as their channel to it closes.
          server.child.kill('SIGKILL');
          assert.deepEqual(await server.exit, { code: null, signal: 'SIGKILL' });
        }
        stopped = true;
        const tally = await loops;
        if (victim === 'primary') server = await startServe(t, env, 45_000, ['--workers', '2']);
        const after = await request(server.url, 'POST', '/v1/pets', {
          key,
          body: { name: `after-kill-${round}`, categoryId: 1 },
        });
        assert.equal(after.status, 201, `a create after the ${victim} was killed: ${after.text}`);
        ledger.sentPets.set(`after-kill-${round}`, { name: `after-kill-${round}`, categoryId: 1, status: 'available' });
        ledger.ackedPets.set(after.json.id, after.json);
        const problems = audit(
          ledger,
          await everything<Pet>(server.url, key, '/v1/pets'),
          await everything<Order>(server.url, key, '/v1/store/orders'),
        );
        t.diagnostic(
          `round ${round}: ${victim} killed after ${delay} ms; acknowledged ${tally.ackedPets} creates + ` +
            `${tally.ackedOrders} orders; no answer ${tally.noAnswer}, cut mid-body ${tally.cut}`,
        );
        assert.deepEqual(tally.unexpected, [], 'every answer was a 201 matching the request');
        assert.ok(tally.ackedPets + tally.ackedOrders > 0, 'some writes were acknowledged');
        assert.deepEqual(problems.slice(0, 20), [], `${problems.length} durability/consistency problems`);
      }
      assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
    });

    test('SIGTERM under load: exit 0, whole answers only (2xx or 503), every 201 survives', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const server = await startServe(t, env);
      const key = await createKey(env, 'stop');
      for (let i = 0; i < 50; i++) {
        const result = await request(server.url, 'POST', '/v1/pets', {
          key,
          body: { name: `base-${i}`, categoryId: 1 },
        });
        assert.equal(result.status, 201, result.text);
      }
      const tally: StopTally = {
        created: [],
        sent: new Map(),
        ok: 0,
        okAfterTerm: 0,
        keptAliveAfterTerm: 0,
        unavailable: 0,
        resets: new Map(),
        problems: [],
      };
      let terminated = false;
      let exited = false;
      const loop = async (loop: number) => {
        for (let i = 0; ; i++) {
          const afterTerm = terminated;
          const create = Math.random() < 0.5;
          const body: PetBody = { name: `stop-l${loop}-${i}`, categoryId: 1 + (i % 5), status: 'available' };
          const label = create ? `POST ${body.name}` : 'GET /v1/pets';
          let outcome: Outcome;
          if (create) {
            tally.sent.set(body.name, body);
            outcome = await attempt(server.url, 'POST', '/v1/pets', key, {
              name: body.name,
              categoryId: body.categoryId,
            });
          } else {
            outcome = await attempt(server.url, 'GET', `/v1/pets?limit=${randomBetween(1, 100)}`, key);
          }
          if (outcome.kind === 'cut') {
            tally.problems.push(`${label}: ${outcome.status} cut mid-body (${outcome.error})`);
            return;
          }
          if (outcome.kind === 'none') {
            if (!afterTerm && !terminated) tally.problems.push(`${label}: no answer before SIGTERM (${outcome.error})`);
            const reset = `${outcome.error} (sent ${afterTerm ? 'after' : 'before'} SIGTERM)`;
            tally.resets.set(reset, (tally.resets.get(reset) ?? 0) + 1);
            return;
          }
          if (outcome.status === 503) {
            const error = outcome.json;
            const whole =
              outcome.headers.get('content-type')?.startsWith('application/json') === true &&
              error?.code === 'service_unavailable' &&
              error?.status === 503 &&
              typeof error?.message === 'string' &&
              Object.keys(error).sort().join() === 'code,message,status';
            if (!whole) tally.problems.push(`${label}: 503 without the Error body: ${outcome.text}`);
            if (!terminated) tally.problems.push(`${label}: 503 before SIGTERM: ${outcome.text}`);
            tally.unavailable++;
            return;
          }
          if (outcome.json === undefined) {
            tally.problems.push(`${label}: ${outcome.status} body is not JSON: ${outcome.text.slice(0, 200)}`);
            return;
          }
          if (create && outcome.status === 201) {
            const pet = outcome.json as Pet;
            if (pet.name !== body.name || pet.categoryId !== body.categoryId || pet.status !== 'available') {
              tally.problems.push(`${label}: 201 with ${outcome.text}`);
            }
            tally.created.push(pet);
          } else if (!create && outcome.status === 200) {
            if (!Array.isArray(outcome.json)) tally.problems.push(`${label}: 200 with ${outcome.text.slice(0, 200)}`);
          } else {
            tally.problems.push(`${label}: unexpected ${outcome.status} ${outcome.text}`);
            return;
          }
          tally.ok++;
          if (terminated) {
            tally.okAfterTerm++;
            if (outcome.headers.get('connection') !== 'close') tally.keptAliveAfterTerm++;
          }
          if (exited) return;
        }
      };
      const loops = Promise.all(Array.from({ length: LOOPS }, (_, i) => loop(i)));
      const delay = randomBetween(300, 800);
      await sleep(delay);
      terminated = true;
      const termAt = Date.now();
      const exit = await server.stop('SIGTERM');
      const stopMs = Date.now() - termAt;
      exited = true;
      await loops;
      t.diagnostic(
        `SIGTERM after ${delay} ms, process ended ${stopMs} ms later with ${JSON.stringify(exit)}: ` +
          `${tally.ok} whole 2xx answers (${tally.okAfterTerm} completed after SIGTERM, ` +
          `${tally.keptAliveAfterTerm} of them with Connection: keep-alive), ${tally.created.length} creates ` +
          `acknowledged, ${tally.unavailable} 503 service_unavailable, no answer (reset/refused): ` +
          `${JSON.stringify(Object.fromEntries(tally.resets))}`,
      );
      assert.deepEqual(tally.problems.slice(0, 20), [], `${tally.problems.length} problems`);
      assert.ok(tally.created.length > 0, 'some creates were acknowledged before the stop');

      const restarted = await startServe(t, env);
      t.after(() => restarted.stop());
      const pets = await everything<Pet>(restarted.url, key, '/v1/pets');
      const byId = new Map(pets.map((pet) => [pet.id, pet]));
      const missing = tally.created.filter((pet) => !isDeepStrictEqual(byId.get(pet.id), pet));
      assert.deepEqual(missing, [], 'every acknowledged create is stored exactly as acknowledged');
      const names = pets.map((pet) => pet.name);
      assert.equal(new Set(names).size, names.length, 'no name stored twice');
      assert.equal(byId.size, pets.length, 'ids are unique');
      for (const pet of pets) {
        if (pet.name.startsWith('base-')) continue;
        const sent = tally.sent.get(pet.name);
        assert.ok(sent !== undefined, `pet nobody sent: ${JSON.stringify(pet)}`);
        assert.deepEqual({ ...pet, id: 0 }, { id: 0, ...sent }, 'an unacknowledged create that landed is whole');
      }
      // Last, so a slow or failed stop does not hide the checks above.
      assert.deepEqual(
        exit,
        { code: 0, signal: null },
        `graceful stop exit status after ${stopMs} ms; stderr:\n${server.stderr()}`,
      );
    });
  });
});
