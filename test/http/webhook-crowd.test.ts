import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * A crowd of endpoints that never answer, registered before one healthy endpoint: the healthy one's
 * deliveries go out at once all the same, and the crowd holds a bounded number of sockets
 * (src/webhooks/endpoint-slots.ts). Black-box over HTTP, with the default time-out of 10 s.
 */

/** The crowd (issue 49); at 300 the engine before 2026-11-29 met the bound below all the same. */
const HANGING = 1000;
/**
 * The share asserted: a ceiling a loaded machine still meets. Alone on two cores the healthy endpoint got 200
 * of 200 within 2 s on both stores (95 % is the aim); pinned to one core beside two or four CPU hogs 173–194
 * on SQLite and 174–197 on PostgreSQL, beside four other webhook test files 182 and 200: the pace holds the
 * crowd's first attempts on a busy loop, and the healthy endpoint's first waits for them once. Before
 * 2026-11-29 it got 153–168 alone, and no more than about 171 could arrive: the process started 64 first
 * attempts per half second, so its first waited about 8 s behind the crowd's
 * (docs/decisions/hanging-endpoint-crowd.md, docs/performance.md).
 */
const WITHIN_2S = 0.85;
const RATE_PER_SECOND = 5;
const SECONDS = 40;
const OPTIONS: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 10_000, retrySchedule: [60_000] },
  webhookEndpointsPerOwner: HANGING + 1,
};

function suite(backend: StoreBackend) {
  test(`${HANGING} endpoints that never answer, then a healthy one: its deliveries within 2 s`, async (t) => {
    const h = await startHarness(t, backend, OPTIONS);
    const receiver = await startReceiver(t, (_n, request) =>
      request.path.startsWith('/hang') ? 'hang' : { status: 204 },
    );
    for (let i = 0; i < HANGING; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, HANGING - i) }, async (_, j) => {
          const body = { url: `${receiver.url}/hang/${i + j}`, events: ['pet.created'] };
          const result = await h.call('POST', '/v1/webhooks', { body });
          assert.equal(result.status, 201, result.text);
        }),
      );
    }
    const healthy = await h.call('POST', '/v1/webhooks', { body: { url: `${receiver.url}/healthy` } });
    assert.equal(healthy.status, 201, healthy.text);

    // Pets at a steady rate; each create's answer time, by pet id.
    const created = new Map<number, number>();
    const started = Date.now();
    for (let i = 0; i < RATE_PER_SECOND * SECONDS; i++) {
      const due = started + (i * 1000) / RATE_PER_SECOND;
      await sleep(Math.max(0, due - Date.now()));
      const [pet] = await h.createPets(1);
      created.set(pet.id, Date.now());
    }
    const atHealthy = () => receiver.received.filter((r) => r.path === '/healthy');
    await receiver.until(() => atHealthy().length >= created.size, 30_000).catch(() => undefined);
    const late = [...created].map(([id, at]) => {
      const arrived = atHealthy().find((r) => (JSON.parse(r.body) as { data: { id: number } }).data.id === id);
      return (arrived?.at ?? Number.POSITIVE_INFINITY) - at;
    });
    const sorted = [...late].sort((a, b) => a - b);
    const within = late.filter((ms) => ms <= 2000).length;
    t.diagnostic(
      `healthy: ${within} of ${late.length} within 2 s; p50 ${sorted[sorted.length >> 1]} ms, ` +
        `p95 ${sorted[Math.floor(sorted.length * 0.95)]} ms, max ${sorted.at(-1)} ms; ` +
        `${receiver.connections()} connections accepted in all`,
    );
    assert.ok(within >= WITHIN_2S * late.length, `${within} of ${late.length} within 2 s`);
  });
}

eachBackend((backend) => {
  describe(`webhooks to a crowd that hangs [${backend.name}]`, () => suite(backend));
});
