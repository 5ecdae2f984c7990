import type { Store } from '../../src/store/store.js';
import type { NewWebhookEndpointRecord, WebhookEndpointRecord } from '../../src/store/webhook-endpoint-records.js';

type EndpointFields = Omit<NewWebhookEndpointRecord, 'owner'> & { readonly owner?: string };

/** Creates an endpoint straight in the store (owner `default` unless named), far below any bound. */
export async function addEndpoint(store: Store, fields: EndpointFields): Promise<WebhookEndpointRecord> {
  const created = await store.webhooks.create({ owner: 'default', ...fields }, Number.MAX_SAFE_INTEGER);
  if (created === undefined) throw new Error('the store refused an endpoint below its bound');
  return created;
}
