/**
 * The event types an endpoint can be sent: those of src/domain/event-types.ts, repeated because the page is
 * compiled apart from the service and imports nothing of it. test/unit/portal-event-types.test.ts holds the
 * two together: a type on one side only fails `npm run typecheck` there, naming it.
 */
export const EVENT_TYPES = [
  'pet.created',
  'pet.status_changed',
  'pet.updated',
  'pet.deleted',
  'order.placed',
  'order.status_changed',
  'webhook_endpoint.disabled',
] as const;

/** What the service sends an endpoint registered without `events`: all but its own news about endpoints. */
export const DEFAULT_EVENTS: readonly string[] = EVENT_TYPES.filter((type) => !type.startsWith('webhook_endpoint.'));
