import { type Static, type TLiteral, type TObject, type TSchema, Type } from 'typebox';
import { EVENT_TYPES, type EventSubject, type EventType as EventTypeName, subjectOf } from '../domain/event-types.js';
import { Order, OrderStatus } from './order.js';
import { PageLimit } from './page.js';
import { EXAMPLE_PET, Pet, PetFieldsBefore, PetStatus } from './pet.js';
import { filterParameter } from './query.js';
import { ref } from './ref.js';
import { WebhookEndpoint } from './webhook.js';

export const EventType = Type.Unsafe<EventTypeName>({
  $id: 'EventType',
  type: 'string',
  enum: [...EVENT_TYPES],
  description: 'What changed.',
});

const ID_DESCRIPTION =
  'Unique and opaque (no `.`); the same in the feed, the stream and every webhook attempt (`webhook-id`): ' +
  'dedupe by it.';

/**
 * What an event of `type` is about, as its id would be in a path: its type's prefix and its data's `id`
 * (the events table's `subject` column).
 */
const subject = (type: EventTypeName) =>
  Type.String({
    pattern: `^${subjectOf(type)}/[1-9][0-9]*$`,
    description:
      "What the event is about: its type's prefix and its data's `id` (`pet/12`, `order/7`, " +
      '`webhook_endpoint/3`). Every event of one pet, order or endpoint has the same `subject`.',
    examples: [`${subjectOf(type)}/12`],
  });

/**
 * One event type's object: the id, the type, what it is about, when it was recorded and the resource after
 * the change.
 */
function eventSchema<T extends EventTypeName, D extends TSchema, E extends Record<string, TSchema>>(
  id: string,
  type: T,
  data: D,
  description: string,
  extra: E,
) {
  return Type.Object(
    {
      id: Type.String({ description: ID_DESCRIPTION }),
      type: Type.Literal(type),
      subject: subject(type),
      timestamp: Type.String({ format: 'date-time', description: 'When the change was recorded (UTC).' }),
      data: ref(data, { description: 'The resource exactly as the API returns it after the change.' }),
      ...extra,
    },
    { $id: id, additionalProperties: false, description },
  );
}

const ETAG_DESCRIPTION =
  'The pet\'s version after the change, as its `ETag` (`"<version>"`, quotes included): send it as `If-Match` ' +
  'to change the pet only if nothing changed it since.';
/** Absent only on events recorded before pets had versions. */
const EarlierEtag = Type.Optional(
  Type.String({ description: `${ETAG_DESCRIPTION} Absent on events recorded before pets had versions.` }),
);
const Etag = Type.String({ description: ETAG_DESCRIPTION });

export const PetCreatedEvent = eventSchema('PetCreatedEvent', 'pet.created', Pet, 'A pet was created.', {
  etag: EarlierEtag,
});
export const PetStatusChangedEvent = eventSchema(
  'PetStatusChangedEvent',
  'pet.status_changed',
  Pet,
  "A pet's status changed: an order was placed (→ pending), delivered (→ sold) or cancelled (→ available), or " +
    'a change of the pet set it (recorded after its `pet.updated`).',
  { previousStatus: ref(PetStatus), etag: EarlierEtag },
);
export const PetUpdatedEvent = eventSchema(
  'PetUpdatedEvent',
  'pet.updated',
  Pet,
  'A pet was changed (`PATCH /pets/{petId}`); a change of its status also records `pet.status_changed`.',
  { previous: PetFieldsBefore, etag: Etag },
);
export const PetDeletedEvent = eventSchema(
  'PetDeletedEvent',
  'pet.deleted',
  Pet,
  'A pet was deleted; `data` is the pet as it was. Its orders keep its `petId`.',
  { etag: Type.String({ description: "The deleted pet's last version, as its `ETag` was." }) },
);
export const OrderPlacedEvent = eventSchema('OrderPlacedEvent', 'order.placed', Order, 'An order was placed.', {});
export const OrderStatusChangedEvent = eventSchema(
  'OrderStatusChangedEvent',
  'order.status_changed',
  Order,
  'An order was approved, delivered or cancelled.',
  { previousStatus: ref(OrderStatus) },
);

export const WebhookEndpointDisabledEvent = eventSchema(
  'WebhookEndpointDisabledEvent',
  'webhook_endpoint.disabled',
  WebhookEndpoint,
  'The service disabled a webhook endpoint: every attempt failed for `WEBHOOK_DISABLE_AFTER`, or it answered ' +
    '410 Gone (`disabledReason` says which). Sent only to endpoints subscribed to it by name.',
  {},
);

/**
 * Each event type's schema (its entry in src/domain/event-types.ts has the rest): the feed's items, the
 * stream's data, the OpenAPI `webhooks` and `components`, the client's Event. The compiler asks for every
 * type, and for its name as the schema's `type`.
 */
export const EVENT_SCHEMAS = {
  'pet.created': PetCreatedEvent,
  'pet.status_changed': PetStatusChangedEvent,
  'pet.updated': PetUpdatedEvent,
  'pet.deleted': PetDeletedEvent,
  'order.placed': OrderPlacedEvent,
  'order.status_changed': OrderStatusChangedEvent,
  'webhook_endpoint.disabled': WebhookEndpointDisabledEvent,
} as const satisfies { readonly [T in EventTypeName]: TObject<{ type: TLiteral<T> }> };

/**
 * The schemas of the events about `subject`, by type name: the order the OpenAPI `components` list them in
 * (shared.ts).
 */
export const eventSchemasAbout = (subject: EventSubject): TSchema[] =>
  EVENT_TYPES.filter((type) => subjectOf(type) === subject)
    .sort()
    .map((type) => EVENT_SCHEMAS[type]);

export type PetCreatedEvent = Static<typeof PetCreatedEvent>;
export type PetStatusChangedEvent = Static<typeof PetStatusChangedEvent>;
export type PetUpdatedEvent = Static<typeof PetUpdatedEvent>;
export type PetDeletedEvent = Static<typeof PetDeletedEvent>;
export type OrderPlacedEvent = Static<typeof OrderPlacedEvent>;
export type OrderStatusChangedEvent = Static<typeof OrderStatusChangedEvent>;
export type WebhookEndpointDisabledEvent = Static<typeof WebhookEndpointDisabledEvent>;
/** Any event: one of EVENT_SCHEMAS, `type` says which. */
export type Event = { [T in EventTypeName]: Static<(typeof EVENT_SCHEMAS)[T]> }[EventTypeName];

export const Event = Type.Unsafe<Event>({
  $id: 'Event',
  anyOf: EVENT_TYPES.map((type) => ref(EVENT_SCHEMAS[type])),
  description: 'A change to a pet, an order or a webhook endpoint; `type` says which.',
});

export const ListEventsQuery = Type.Object(
  {
    limit: PageLimit,
    type: filterParameter(EVENT_TYPES, 'Only events of this type.'),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Opaque position from the `Link: rel="next"` header of the previous page (or an SSE `id`). ' +
          'Valid only with the same `type` filter.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

/** The live stream's body (`Accept: text/event-stream`), as the OpenAPI document shows it: text, not JSON. */
export const EventStreamBody = Type.String({
  description:
    'Server-Sent Events (text/event-stream): frames separated by a blank line, each `id: <cursor after this ' +
    'event>`, `event: <its type>`, `data: <the Event JSON on one line>`; comment lines start with `:`.',
  examples: [
    ': open\n\nid: MDoxMjo.4vJtXz0bq2Nf3cL1sY8wQA\nevent: pet.created\ndata: {"id":"evt_12","type":"pet.created",' +
      `"subject":"pet/${EXAMPLE_PET.id}","timestamp":"2026-01-05T10:00:00.000Z",` +
      `"data":${JSON.stringify(EXAMPLE_PET)}}\n\n` +
      ': keep-alive\n\n',
  ],
});
