/** What an event says changed (docs/decisions/event-outbox.md): the feed, the stream and webhooks share these. */
export const EVENT_TYPES = [
  'pet.created',
  'pet.status_changed',
  'pet.updated',
  'pet.deleted',
  'order.placed',
  'order.status_changed',
  'webhook_endpoint.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What an endpoint registered without `events` is sent: the changes to pets and orders. The service's own
 * news about endpoints goes only to those that ask for it (docs/decisions/endpoint-health.md).
 */
export const DEFAULT_SUBSCRIPTION: readonly EventType[] = EVENT_TYPES.filter(
  (type) => type !== 'webhook_endpoint.disabled',
);

/**
 * A test send's event type (docs/decisions/test-send.md): delivered to the one endpoint asked
 * for, never on the feed or the stream. Not an EventType, so no endpoint subscribes to it and the feed
 * cannot be filtered by it.
 */
export const TEST_EVENT_TYPE = 'webhook.test';
/** The type of what a webhook delivery carries: an event of the feed, or a test send. */
export type SentEventType = EventType | typeof TEST_EVENT_TYPE;
