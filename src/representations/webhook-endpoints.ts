import type {
  ChangedWebhookEndpoint,
  CreatedWebhookEndpoint,
  RotatedWebhookSecret,
  WebhookEndpoint,
} from '../schemas/webhook.js';
import type { DeliveryAttempt } from '../schemas/webhook-delivery.js';
import type { DeliveryAttemptRecord } from '../store/records.js';
import type { WebhookEndpointRecord } from '../store/webhook-endpoint-records.js';
import { eventId, signatureView, toEndpointView } from './resources.js';

/**
 * What the webhook routes show of an endpoint, never its secrets: an HMAC secret is shown once, in the 201 of
 * the creation (toCreatedWebhookEndpoint), the answer of the rotation that made it (toRotatedWebhookSecret) or of
 * the change to `hmac` that made it (toChangedWebhookEndpoint). An Ed25519 private key is never shown: its
 * public key is, in every one of them.
 */
export function toWebhookEndpoint(record: WebhookEndpointRecord): WebhookEndpoint {
  const { secret: _secret, previousSecret, ...shown } = record;
  return toEndpointView({ ...shown, previousSecretExpiresAt: previousSecret?.expiresAt ?? null });
}

/** The secret to share, when the endpoint signs with HMAC; nothing for an Ed25519 one (its key is private). */
const sharedSecret = (record: WebhookEndpointRecord) => (record.publicKey === null ? { secret: record.secret } : {});

export function toCreatedWebhookEndpoint(record: WebhookEndpointRecord): CreatedWebhookEndpoint {
  return { ...toWebhookEndpoint(record), ...sharedSecret(record) };
}

/** `madeSecret`: the secret the change would have given the endpoint; shown when it did, and is HMAC. */
export function toChangedWebhookEndpoint(record: WebhookEndpointRecord, madeSecret?: string): ChangedWebhookEndpoint {
  return { ...toWebhookEndpoint(record), ...(record.secret === madeSecret ? sharedSecret(record) : {}) };
}

export function toRotatedWebhookSecret(record: WebhookEndpointRecord): RotatedWebhookSecret {
  const { previousSecretExpiresAt } = toWebhookEndpoint(record);
  return { ...sharedSecret(record), ...signatureView(record), previousSecretExpiresAt };
}

/**
 * One entry of the deliveries log. While its endpoint is disabled no attempt is due, so a pending entry
 * promises none: its nextAttemptAt is left out (enabling it sends what waited at once).
 */
export function toDeliveryAttempt(record: DeliveryAttemptRecord, endpointEnabled: boolean): DeliveryAttempt {
  const due = record.nextAttemptAt !== null && endpointEnabled;
  return {
    eventId: eventId(record.eventSeq),
    type: record.type,
    attempt: record.attempt,
    status: record.status,
    trigger: record.trigger,
    ...(record.responseStatus === null ? {} : { responseStatus: record.responseStatus }),
    ...(record.error === null ? {} : { error: record.error }),
    ...(record.durationMs === null ? {} : { durationMs: record.durationMs }),
    ...(record.responseBody === null ? {} : { responseBody: record.responseBody }),
    ...(record.responseBodyTruncated ? { responseBodyTruncated: true as const } : {}),
    attemptedAt: record.attemptedAt.toISOString(),
    ...(due ? { nextAttemptAt: record.nextAttemptAt?.toISOString() } : {}),
    ...(record.waitingFor === null ? {} : { waitingFor: eventId(record.waitingFor) }),
  };
}
