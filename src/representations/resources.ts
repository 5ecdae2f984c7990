import { strongTag } from '../domain/entity-tags.js';
import { TEST_EVENT_TYPE } from '../domain/event-types.js';
import { isComplete } from '../domain/order-status.js';
import type { PetPatch } from '../domain/pet-change.js';
import { signatureOf } from '../domain/webhook-signature.js';
import type { Event } from '../schemas/event.js';
import type { Order } from '../schemas/order.js';
import type { Pet } from '../schemas/pet.js';
import type { WebhookEndpoint } from '../schemas/webhook.js';
import type { SentEvent } from '../schemas/webhook-test.js';
import type { EventPetRecord, EventRecord, OrderRecord, PetRecord, SentEventRecord } from '../store/records.js';
import type { WebhookEndpointSnapshot } from '../store/webhook-endpoint-records.js';

/**
 * The boundary between what the store keeps and what the API shows: pets, orders, endpoints as events show
 * them, and the events,
 * for the routes and the webhook sender alike (so it sits below both).
 */
export function toPet(record: Omit<PetRecord, 'version'>): Pet {
  return { id: record.id, name: record.name, categoryId: record.categoryId, status: record.status };
}

export function toOrder(record: OrderRecord): Order {
  return {
    id: record.id,
    petId: record.petId,
    quantity: record.quantity,
    status: record.status,
    createdAt: record.createdAt.toISOString(),
    complete: isComplete(record.status),
  };
}

/** An endpoint as `GET /v1/webhooks/{id}` shows it, from what may be shown (webhook-endpoints.ts has the rest). */
export function toEndpointView(endpoint: WebhookEndpointSnapshot): WebhookEndpoint {
  return {
    id: endpoint.id,
    owner: endpoint.owner,
    url: endpoint.url,
    events: [...endpoint.events],
    description: endpoint.description,
    enabled: endpoint.enabled,
    ordering: endpoint.ordering,
    rateLimit: endpoint.rateLimit,
    ...signatureView(endpoint),
    createdAt: endpoint.createdAt.toISOString(),
    // Kept as it was set, so a past time says when the previous secret stopped signing.
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt?.toISOString() ?? null,
    disabledReason: endpoint.disabledReason,
    disabledAt: endpoint.disabledAt?.toISOString() ?? null,
    // Kept as it was set, as previousSecretExpiresAt is: a past time holds nothing back.
    pausedUntil: endpoint.pausedUntil?.toISOString() ?? null,
  };
}

/** An endpoint's kind of signature and its public keys, as the endpoint and a rotation's answer show them. */
export function signatureView(keys: Pick<WebhookEndpointSnapshot, 'publicKey' | 'previousPublicKey'>) {
  return {
    signature: signatureOf(keys.publicKey),
    publicKey: keys.publicKey,
    previousPublicKey: keys.previousPublicKey,
  };
}

/** An event's id: the same in the feed, the stream and every webhook attempt (`webhook-id`). */
export const eventId = (seq: number) => `evt_${seq}`;
/** The sequence number of an event id the request's schema let through (`evt_` and digits). */
export const eventSeq = (id: string) => Number(id.slice('evt_'.length));

/**
 * An event as the feed, the stream and webhooks show it, from what its record keeps (its type's entry in
 * EVENT_RULES decides that, and its schema says the same): the subject after the change, its state before,
 * and a pet's version. In the order JSON.stringify keeps for webhook bodies, the schema's: id, type, subject,
 * timestamp, data, then the rest.
 */
export function toEvent(record: EventRecord): Event {
  const { seq, type, subject, at } = record;
  const head = { id: eventId(seq), type, subject, timestamp: at.toISOString() };
  if ('pet' in record) return { ...head, data: toPet(record.pet), ...before(record), ...eventTag(record.pet) } as Event;
  if ('order' in record) return { ...head, data: toOrder(record.order), ...before(record) } as Event;
  return { ...head, data: toEndpointView(record.endpoint) } as Event;
}

/** What an event shows of its subject before the change: its status, or the changed fields' values. */
function before(record: EventRecord): { previousStatus?: string; previous?: PetPatch } {
  if ('previousStatus' in record) return { previousStatus: record.previousStatus };
  if ('previous' in record) return { previous: record.previous };
  return {};
}

/** An event's `etag`: the pet's version, unless the event was recorded before pets had versions. */
function eventTag(pet: EventPetRecord): { etag?: string } {
  return pet.version === undefined ? {} : { etag: strongTag(pet.version) };
}

/** A webhook delivery's body: the event as the feed shows it, or a test send's. */
export function toSentEvent(record: SentEventRecord): SentEvent {
  if (record.type !== TEST_EVENT_TYPE) return toEvent(record);
  const timestamp = record.at.toISOString();
  return { id: eventId(record.seq), type: record.type, timestamp, data: { webhookId: record.webhookId } };
}
