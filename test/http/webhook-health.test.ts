import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import type { Answer } from '../../dev/webhook-receiver.js';
import { eachBackend, type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import type { StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { deliveryLog } from '../helpers/webhooks.js';

/**
 * Endpoint health, black-box over HTTP: endpoints disabled by a change, and enabled again; what waited for
 * them is then sent.
 */

/** One retry, a minute after the first attempt: a test sees a delivery wait. */
const ONE_LATE_RETRY: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [60_000] },
};

async function register(h: Harness, url: string, body: Record<string, unknown> = {}) {
  const result = await h.call('POST', '/v1/webhooks', { body: { url, events: ['pet.created'], ...body } });
  assert.equal(result.status, 201, result.text);
  return result.json as { id: number; secret: string };
}

async function patch(h: Harness, id: number, body: Record<string, unknown>) {
  const result = await h.call('PATCH', `/v1/webhooks/${id}`, { body });
  assert.equal(result.status, 200, result.text);
  return result.json;
}

const logOf = (h: Harness, endpoint: number, count: number) =>
  eventually(`endpoint ${endpoint}'s ${count} attempts`, async () => {
    const log = await deliveryLog(h, endpoint);
    return log.length >= count ? log : undefined;
  });

const failingFirst =
  (times: number, status = 500): Answer =>
  (n) => ({ status: n < times ? status : 204 });

function suite(backend: StoreBackend) {
  test('enabled again, an endpoint is sent at once what waited for it', async (t) => {
    const h = await startHarness(t, backend, ONE_LATE_RETRY);
    const receiver = await startReceiver(t, failingFirst(1));
    const { id } = await register(h, receiver.url);
    await h.createPets(1);
    const [first] = await logOf(h, id, 1);
    assert.equal(first.status, 'pending');
    const disabled = await patch(h, id, { enabled: false });
    assert.equal(disabled.disabledReason, 'manual');
    await h.createPets(1);
    const enabled = await patch(h, id, { enabled: true });
    assert.deepEqual([enabled.enabled, enabled.disabledReason, enabled.disabledAt], [true, null, null]);
    // Due a minute after its first attempt; sent within a poll of the enable.
    await receiver.until((got) => got.length === 2, 3000);
    assert.deepEqual(receiver.ids(), [first.eventId, first.eventId], 'the event recorded while disabled is not sent');
  });
}

eachBackend((backend) => {
  describe(`webhook endpoint health [${backend.name}]`, () => suite(backend));
});
