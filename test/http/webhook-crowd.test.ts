import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eachBackend, type HarnessOptions, startHarness } from '../helpers/harness.js';
import type { StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * A crowd of endpoints that never answer, registered before one healthy endpoint: the healthy one's
 * deliveries go out at once all the same, and the crowd holds a bounded number of sockets
 * (src/webhooks/endpoint-slots.ts). Black-box over HTTP, with the default time-out of 10 s.
 */

const HANGING = 300;
/**
 * The share asserted: a ceiling a loaded machine still meets. Alone on two cores the healthy endpoint got
 * 197–198 of 200 within 2 s (95 % is the aim); in the full suite 191–197, and beside a heavier job 186–187 on
 * SQLite, whose claims and fan-out run on the event loop the load slows; in CI's full suite 161 and 172 while
 * the receiver's accept queue overflowed (since its larger backlog: 190–198, quiet, in CI and beside two CPU
 * hogs). Before this engine it got 103 of 200, which three quarters still refuses.
 */
const WITHIN_2S = 0.75;
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
