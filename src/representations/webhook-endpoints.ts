import type { CreatedWebhookEndpoint, RotatedWebhookSecret, WebhookEndpoint } from '../schemas/webhook.js';
import type { DeliveryAttempt } from '../schemas/webhook-delivery.js';
import type { DeliveryAttemptRecord } from '../store/records.js';
import type { WebhookEndpointRecord } from '../store/webhook-endpoint-records.js';
import { eventId, toEndpointView } from './resources.js';

/**
 * What the webhook routes show of an endpoint, never its secrets: a secret is shown once, in the 201 of the
 * creation (toCreatedWebhookEndpoint) or the answer of the rotation that made it (toRotatedWebhookSecret).
 */
export function toWebhookEndpoint(record: WebhookEndpointRecord): WebhookEndpoint {
  const { secret: _secret, previousSecret, ...shown } = record;
  return toEndpointView({ ...shown, previousSecretExpiresAt: previousSecret?.expiresAt ?? null });
}

export function toCreatedWebhookEndpoint(record: WebhookEndpointRecord): CreatedWebhookEndpoint {
  return { ...toWebhookEndpoint(record), secret: record.secret };
}

export function toRotatedWebhookSecret(record: WebhookEndpointRecord): RotatedWebhookSecret {
  return { secret: record.secret, previousSecretExpiresAt: toWebhookEndpoint(record).previousSecretExpiresAt };
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
