import { CLI_AUDIT } from '../../src/domain/audit.js';
import { DEFAULT_DELIVERY_ORDERING } from '../../src/domain/delivery-ordering.js';
import type { Store } from '../../src/store/store.js';
import type { NewWebhookEndpointRecord, WebhookEndpointRecord } from '../../src/store/webhook-endpoint-records.js';

type Defaulted = 'owner' | 'ordering' | 'publicKey' | 'rateLimit';
type EndpointFields = Omit<NewWebhookEndpointRecord, Defaulted> & Partial<Pick<NewWebhookEndpointRecord, Defaulted>>;

/**
 * Creates an endpoint straight in the store (owner `default`, the default ordering, an HMAC secret's null public
 * key, no rate limit, unless named), far below any bound.
 */
export async function addEndpoint(store: Store, fields: EndpointFields): Promise<WebhookEndpointRecord> {
  const defaults = { owner: 'default', ordering: DEFAULT_DELIVERY_ORDERING, publicKey: null, rateLimit: null };
  const created = await store.webhooks.create({ ...defaults, ...fields }, Number.MAX_SAFE_INTEGER, CLI_AUDIT);
  if (created === undefined) throw new Error('the store refused an endpoint below its bound');
  return created;
}
