/**
 * What an event is about: its type up to the first dot. It says what the event's data is, and who may see
 * it: events about webhook endpoints are their owner's only (the events table's generated `owner` column
 * reads the same prefix) and are sent only to endpoints that name them; the others are everyone's.
 */
export type EventSubject = 'pet' | 'order' | 'webhook_endpoint';

/** What an event keeps besides its subject as the change left it. */
interface EventRule {
  /** The subject before the change: its status (`previousStatus`), or the changed fields' values (`previous`). */
  readonly previous?: 'status' | 'fields';
  /** Recorded before pets had versions too: its pet may have no version, and the event then no `etag`. */
  readonly unversioned?: true;
}

/** Each entry as its subject allows: a type starts with a subject, and only a pet's change keeps fields. */
type Entries<R> = {
  readonly [T in keyof R]: T extends `pet.${string}`
    ? EventRule
    : T extends `${EventSubject}.${string}`
      ? EventRule & { readonly previous?: 'status' }
      : never;
};
const entries = <const R extends Entries<R>>(rules: R) => rules;

/**
 * Every event type, one entry each (docs/decisions/event-outbox.md), in the order the feed's filter, the
 * OpenAPI `webhooks` and the portal list them. An entry's schema is its key in EVENT_SCHEMAS
 * (src/schemas/event.ts), which the compiler asks for; the store's records, the representations and the
 * client's types follow from the two. The writes that record it name it (`outbox.record`, `recordEvents`).
 */
const EVENT_RULES = entries({
  'pet.created': { unversioned: true },
  'pet.status_changed': { previous: 'status', unversioned: true },
  'pet.updated': { previous: 'fields' },
  'pet.deleted': {},
  'order.placed': {},
  'order.status_changed': { previous: 'status' },
  'webhook_endpoint.disabled': {},
});

export type EventType = keyof typeof EVENT_RULES;
export const EVENT_TYPES = Object.keys(EVENT_RULES) as readonly EventType[];

/** The subject of a type, as the compiler reads it from the name. */
export type SubjectOf<T extends EventType> = T extends `${infer S extends EventSubject}.${string}` ? S : never;
export const subjectOf = (type: EventType) => type.slice(0, type.indexOf('.')) as EventSubject;

/** The entry of `T`, with its values as written. */
export type RuleOf<T extends EventType> = (typeof EVENT_RULES)[T];
export const ruleOf = (type: EventType): EventRule => EVENT_RULES[type];

/**
 * What an endpoint registered without `events` is sent: every type but those about endpoints, the service's
 * own news about them, which goes only to those that ask for it (docs/decisions/endpoint-health.md).
 */
export const DEFAULT_SUBSCRIPTION: readonly EventType[] = EVENT_TYPES.filter(
  (type) => subjectOf(type) !== 'webhook_endpoint',
);

/**
 * A test send's event type (docs/decisions/test-send.md): delivered to the one endpoint asked
 * for, never on the feed or the stream. Not an EventType, so no endpoint subscribes to it and the feed
 * cannot be filtered by it.
 */
export const TEST_EVENT_TYPE = 'webhook.test';
/** The type of what a webhook delivery carries: an event of the feed, or a test send. */
export type SentEventType = EventType | typeof TEST_EVENT_TYPE;
