import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import type { Harness, HarnessOptions } from './harness.js';
import { startReceiver } from './webhook-receiver.js';

/** What recordEveryType needs of the service: webhooks sent to a local receiver, whose 410 disables at once. */
export const SENDS_LOCALLY: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [100] },
};

/**
 * Makes one event of every type over HTTP, the last an endpoint's `webhook_endpoint.disabled` (its receiver
 * answers 410), and returns each event's type and subject, in the order the feed lists them. Pets, orders
 * and endpoints start at id 1 each, so only the prefix tells `pet/1`, `order/1` and `webhook_endpoint/1` apart.
 */
export async function recordEveryType(t: TestContext, h: Harness): Promise<[string, string][]> {
  const call = async (method: string, path: string, status: number, body?: Record<string, unknown>) => {
    const result = await h.call(method, path, body === undefined ? {} : { body });
    assert.equal(result.status, status, `${method} ${path}: ${result.text}`);
    return result.json;
  };
  const rex = await call('POST', '/v1/pets', 201, { name: 'Rex', categoryId: 1 });
  await call('PATCH', `/v1/pets/${rex.id}`, 200, { name: 'Rex II' });
  const order = await call('POST', '/v1/store/orders', 201, { petId: rex.id });
  await call('PATCH', `/v1/store/orders/${order.id}`, 200, { status: 'approved' });
  const tom = await call('POST', '/v1/pets', 201, { name: 'Tom', categoryId: 1 });
  await call('DELETE', `/v1/pets/${tom.id}`, 204);
  const gone = await startReceiver(t, () => ({ status: 410 }));
  const endpoint = await call('POST', '/v1/webhooks', 201, { url: gone.url, events: ['pet.created'] });
  const kim = await call('POST', '/v1/pets', 201, { name: 'Kim', categoryId: 1 });
  const expected: [string, string][] = [
    ['pet.created', `pet/${rex.id}`],
    ['pet.updated', `pet/${rex.id}`],
    ['order.placed', `order/${order.id}`],
    ['pet.status_changed', `pet/${rex.id}`],
    ['order.status_changed', `order/${order.id}`],
    ['pet.created', `pet/${tom.id}`],
    ['pet.deleted', `pet/${tom.id}`],
    ['pet.created', `pet/${kim.id}`],
    ['webhook_endpoint.disabled', `webhook_endpoint/${endpoint.id}`],
  ];
  assert.deepEqual([...new Set(expected.map(([type]) => type))].sort(), [...EVENT_TYPES].sort(), 'every type');
  return expected;
}
