import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Received } from '../../dev/webhook-receiver.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createEndpoint, deliveryLog } from '../helpers/webhooks.js';

/**
 * Events in order per subject (docs/decisions/events-in-order.md), black-box: what a receiver acknowledges of
 * one pet arrives in the order it happened, however its attempts fail, on two instances sending at once; and
 * one pet's failing events hold back that pet alone.
 */

/** Retries soon and often enough that none fails for good at one failure in five (0.2^9). */
const RETRYING: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 3000, retrySchedule: [20, 40, 80, 160, 320, 500, 500, 500] },
};

const PETS = 150;

interface Delivered {
  readonly id: string;
  readonly seq: number;
  readonly type: string;
  readonly data: { id: number; name: string; categoryId: number; status: string };
}

const delivered = (request: Received): Delivered => {
  const event = JSON.parse(request.body);
  return { ...event, seq: Number(event.id.slice('evt_'.length)) };
};

/** Every pet the service lists, by id, as the API shows it. */
async function listedPets(h: Harness): Promise<Map<number, unknown>> {
  const pets = new Map<number, unknown>();
  let path: string | undefined = '/v1/pets?limit=100';
  while (path !== undefined) {
    const page = await h.call('GET', path);
    assert.equal(page.status, 200, page.text);
    for (const pet of page.json) pets.set(pet.id, pet);
    path = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return pets;
}

/** How many events the feed holds (every one a pet's here). */
async function feedLength(h: Harness): Promise<number> {
  let count = 0;
  let path = '/v1/events?limit=100';
  for (;;) {
    const page = await h.call('GET', path);
    assert.equal(page.status, 200, page.text);
    count += page.json.length;
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    if (page.json.length === 0 || next === undefined) return count;
    path = next;
  }
}

eachBackend((backend) => {
  describe(`webhook events in order per subject [${backend.name}]`, () => {
    test('two instances, a slow receiver failing one attempt in five: each pet in order, the copy equal', async (t) => {
      const h = await startHarness(t, backend, RETRYING);
      await h.startInstance();
      // Acknowledged: answered 2xx. Applied as it arrives, as a receiver doing the work before answering would.
      const acknowledged: Delivered[] = [];
      const copy = new Map<number, unknown>();
      let random = 7;
      const next = () => {
        random = (random * 1103515245 + 12345) % 2 ** 31;
        return random / 2 ** 31;
      };
      const receiver = await startReceiver(t, (_n, request) => {
        const delayMs = Math.floor(next() * 250);
        if (next() < 0.2) return { status: 500, delayMs };
        const event = delivered(request);
        acknowledged.push(event);
        if (event.type === 'pet.deleted') copy.delete(event.data.id);
        else copy.set(event.data.id, event.data);
        return { status: 204, delayMs };
      });
      await createEndpoint(h, { url: receiver.url });

      const pets = await h.createPets(PETS);
      // Ten pets at a time: each changed twice in a row, and the database's pool not flooded on a busy machine.
      const change = async (pet: { id: number }, i: number) => {
        const renamed = await h.call('PATCH', `/v1/pets/${pet.id}`, { body: { name: `renamed-${i}` } });
        assert.equal(renamed.status, 200, renamed.text);
        const sold = await h.call('PATCH', `/v1/pets/${pet.id}`, { body: { status: 'sold', categoryId: 2 } });
        assert.equal(sold.status, 200, sold.text);
        if (i % 2 === 0) assert.equal((await h.call('DELETE', `/v1/pets/${pet.id}`)).status, 204);
      };
      for (let i = 0; i < pets.length; i += 10)
        await Promise.all(pets.slice(i, i + 10).map((pet, j) => change(pet, i + j)));
      const events = await feedLength(h);
      const waitUntil = Date.now() + 120_000;
      while (new Set(acknowledged.map((event) => event.id)).size < events && Date.now() < waitUntil) await sleep(100);

      const ids = new Set(acknowledged.map((event) => event.id));
      assert.equal(ids.size, events, `every event acknowledged: ${ids.size} of ${events}`);
      const last = new Map<number, number>();
      const inversions: string[] = [];
      for (const event of acknowledged) {
        const before = last.get(event.data.id) ?? 0;
        if (event.seq < before) inversions.push(`pet ${event.data.id}: ${event.id} after evt_${before}`);
        last.set(event.data.id, Math.max(before, event.seq));
      }
      t.diagnostic(`${events} events, ${receiver.received.length} requests, ${acknowledged.length} acknowledged`);
      assert.deepEqual(inversions, [], 'per pet, acknowledged in feed order');
      assert.deepEqual(copy, await listedPets(h), 'the copy built from them is the service');
    });

    test("a pet its receiver always refuses holds that pet's later events alone, until it failed for good", async (t) => {
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: 3000, retrySchedule: [1500, 1500] },
      });
      let refused: number | undefined;
      const receiver = await startReceiver(t, (_n, request) => ({
        status: delivered(request).data.id === refused ? 500 : 204,
      }));
      const { id: endpoint } = await createEndpoint(h, { url: receiver.url });
      const [pet] = await h.createPets(1);
      refused = pet.id;
      await receiver.until((got) => got.length === 1, 5000);
      const created = delivered(receiver.received[0] as Received).id;
      const renamed = await h.call('PATCH', `/v1/pets/${pet.id}`, { body: { name: 'renamed' } });
      assert.equal(renamed.status, 200, renamed.text);

      // Others flow meanwhile: each created pet is sent within 2 s.
      const late: number[] = [];
      await Promise.all(
        Array.from({ length: 40 }, async () => {
          const [other] = await h.createPets(1);
          const since = Date.now();
          const mine = (got: readonly Received[]) => got.some((request) => delivered(request).data.id === other.id);
          await receiver.until(mine, 10_000);
          late.push((receiver.received.find((request) => delivered(request).data.id === other.id)?.at ?? 0) - since);
        }),
      );
      const within = late.filter((ms) => ms <= 2000).length;
      t.diagnostic(`other pets: ${within} of ${late.length} within 2 s, max ${Math.max(...late)} ms`);
      assert.ok(within >= 0.95 * late.length, `other pets within 2 s: ${late.join(' ')}`);

      const updated = `evt_${delivered(receiver.received[0] as Received).seq + 1}`;
      const waiting = (await deliveryLog(h, endpoint)).filter((entry) => entry.eventId === updated);
      assert.deepEqual(
        waiting.map(({ status, waitingFor, attempt }) => ({ status, waitingFor, attempt })),
        [{ status: 'pending', waitingFor: created, attempt: 1 }],
        'the update waits for the create, and says so',
      );
      const sentBefore = (id: string) => receiver.ids().filter((got) => got === id).length;
      assert.equal(sentBefore(updated), 0, 'not sent while the create is retried');

      // The create fails for good after its third attempt; then the update goes.
      await receiver.until((got) => got.some((request) => delivered(request).id === updated), 15_000);
      const log = await deliveryLog(h, endpoint);
      const createdFailed = log.find((entry) => entry.eventId === created && entry.status === 'failed');
      assert.ok(createdFailed, 'the create failed for good first');
      const firstUpdate = receiver.received.find((request) => delivered(request).id === updated) as Received;
      assert.ok(firstUpdate.at >= Date.parse(createdFailed.attemptedAt), 'and the update was sent after it');
    });

    test('an endpoint with ordering "none" gets a pet\'s next event while the first still hangs', async (t) => {
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: 30_000, retrySchedule: [60_000] },
      });
      let hanging: number | undefined;
      const receiver = await startReceiver(t, (_n, request) => {
        const event = delivered(request);
        return event.type === 'pet.created' && event.data.id === hanging ? 'hang' : { status: 204 };
      });
      const { id: endpoint } = await createEndpoint(h, { url: receiver.url, ordering: 'none' });
      // Answered at once first, so the endpoint has earned more than its first slot (learned-endpoint-slots.md).
      await h.createPets(20);
      await receiver.until((got) => got.length === 20, 10_000);
      hanging = 21;
      const [pet] = await h.createPets(1);
      assert.equal(pet.id, hanging);
      await receiver.until((got) => got.length === 21, 5000);
      assert.equal((await h.call('PATCH', `/v1/pets/${pet.id}`, { body: { name: 'renamed' } })).status, 200);
      await receiver.until((got) => got.some((request) => delivered(request).type === 'pet.updated'), 10_000);
      const log = await deliveryLog(h, endpoint);
      assert.ok(
        log.every((entry) => entry.waitingFor === undefined),
        'nothing waits',
      );
    });
  });
});
