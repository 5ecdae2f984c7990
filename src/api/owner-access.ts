import type { FastifyRequest } from 'fastify';
import { grants } from '../domain/api-key.js';
import { ERRORS } from '../errors/catalogue.js';
import type { Store } from '../store/store.js';
import type { WebhookEndpointRecord } from '../store/webhook-endpoint-records.js';

/**
 * Whose webhook endpoints a request reaches (docs/decisions/owners.md): its key's owner's, or every
 * owner's for a key with `admin`. The routes ask here, so no operation can forget the boundary.
 */

/** The request's key: every route that calls these has passed auth with a scope. */
function keyOf(request: FastifyRequest) {
  const key = request.apiKey;
  if (key === null) throw new Error('an owner check ran on a route without a key');
  return key;
}

/** The owner whose endpoints and endpoint events the request sees; undefined: every owner's (admin). */
export function ownerSeen(request: FastifyRequest): string | undefined {
  const key = keyOf(request);
  return grants(key.scopes, 'admin') ? undefined : key.owner;
}

/**
 * The owner a request acts for when it names one (`owner` in a body or a query): its own, or any for admin;
 * another owner named by a key without `admin` is 403.
 */
export function ownerActedFor(request: FastifyRequest, named: string | undefined): string {
  const key = keyOf(request);
  if (named === undefined || named === key.owner) return key.owner;
  if (!grants(key.scopes, 'admin')) throw ERRORS.otherOwner.create(key.owner);
  return named;
}

/** Whether the request may see this endpoint: its owner's, or any for admin. */
function sees(request: FastifyRequest, endpoint: WebhookEndpointRecord): boolean {
  const owner = ownerSeen(request);
  return owner === undefined || owner === endpoint.owner;
}

/**
 * The endpoint, if the request may see it; else 404 with the very message of an id that never existed, so
 * no key learns which ids another owner holds. An endpoint's owner never changes, so an operation that
 * follows this check acts on an endpoint of the same owner (or on none, if it was deleted meanwhile: 404).
 */
export async function visibleEndpoint(
  store: Store,
  request: FastifyRequest,
  id: number,
): Promise<WebhookEndpointRecord> {
  const endpoint = await store.webhooks.get(id);
  if (endpoint === undefined || !sees(request, endpoint)) throw ERRORS.webhookNotFound.create(id);
  return endpoint;
}
