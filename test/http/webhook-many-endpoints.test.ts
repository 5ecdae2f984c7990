import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * A thousand endpoints (docs/decisions/claims-read-what-they-take.md): claims take endpoints in turn and
 * fan-out queues a bounded step when what is queued runs short; every event still reaches every endpoint,
 * once. (The store contract holds the step's bound; test/unit/delivery-pace.test.ts the idle pace.)
 */

const ENDPOINTS = 1000;
const PETS = 2;

async function registerMany(h: Harness, url: string): Promise<void> {
  for (let i = 0; i < ENDPOINTS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, async (_, j) => {
        const body = { url: `${url}/${i + j}`, events: ['pet.created'] };
        const result = await h.call('POST', '/v1/webhooks', { body });
        assert.equal(result.status, 201, result.text);
      }),
    );
  }
}

function suite(backend: StoreBackend) {
  test(`${ENDPOINTS} endpoints: each gets every event, once`, async (t) => {
    const h = await startHarness(t, backend, {
      webhooks: { allowPrivateUrls: true },
      // An attempt answered after its time-out is sent again by design (at least once); on a machine loaded
      // enough that one is (71 s for 2,000 once), no retry comes within the test to count twice.
      webhookDelivery: { timeoutMs: 30_000, retrySchedule: [600_000] },
      // One owner's thousand: far past the default bound of 50.
      webhookEndpointsPerOwner: ENDPOINTS,
    });
    const receiver = await startReceiver(t);
    await registerMany(h, receiver.url);
    const started = Date.now();
    await Promise.all(Array.from({ length: PETS }, () => h.createPets(1)));
    // A ceiling a loaded machine meets: 2–4 s here when quiet, 33–38 s for 3,000 beside three test suites.
    await receiver.until((got) => got.length >= ENDPOINTS * PETS, 120_000);
    t.diagnostic(`${ENDPOINTS * PETS} deliveries in ${Date.now() - started} ms`);
    const sent = new Set(receiver.received.map((request) => `${request.path} ${request.headers['webhook-id']}`));
    assert.equal(sent.size, ENDPOINTS * PETS, 'each event to each endpoint');
    assert.equal(receiver.received.length, ENDPOINTS * PETS, 'none twice');
  });
}

eachBackend((backend) => {
  describe(`webhooks to many endpoints [${backend.name}]`, () => suite(backend));
});
