import { type Static, Type } from 'typebox';
import { DELIVERY_STATUSES, type DeliveryStatus as DeliveryStatusName } from '../domain/delivery-status.js';
import { DELIVERY_TRIGGERS, type DeliveryTrigger as DeliveryTriggerName } from '../domain/delivery-trigger.js';
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../domain/event-types.js';
import { EventIdParameter } from './event-id.js';
import { PageLimit } from './page.js';
import { filterParameter } from './query.js';

export const DeliveryStatus = Type.Unsafe<DeliveryStatusName>({
  $id: 'DeliveryStatus',
  type: 'string',
  enum: [...DELIVERY_STATUSES],
  description:
    '`succeeded`: a 2xx answer; `pending`: failed and will be retried; `failed`: the last try failed, or the ' +
    'delivery expired (still pending when its event passed `EVENT_RETENTION_DAYS`; not sent, `error` says so).',
});

export const DeliveryTrigger = Type.Unsafe<DeliveryTriggerName>({
  $id: 'DeliveryTrigger',
  type: 'string',
  enum: [...DELIVERY_TRIGGERS],
  description:
    'Why the delivery was sent: `event`, its event was recorded; `resend`, `POST /webhooks/{webhookId}/resend`; ' +
    '`recover`, `POST /webhooks/{webhookId}/recover`; `test`, `POST /webhooks/{webhookId}/test`.',
});

export const DeliveryAttempt = Type.Object(
  {
    eventId: Type.String({ description: 'The event sent: its `id` in the feed, and the `webhook-id` header.' }),
    // Spelled out, not SentEventType: the client's types (dev/pack-client.ts) expand it to plain TypeScript.
    type: Type.Unsafe<(typeof EVENT_TYPES)[number] | typeof TEST_EVENT_TYPE>({
      type: 'string',
      enum: [...EVENT_TYPES, TEST_EVENT_TYPE],
      description: "The event's type; `webhook.test` for a test send (`POST /webhooks/{webhookId}/test`).",
    }),
    attempt: Type.Integer({
      minimum: 1,
      description:
        '1 for the first try of the delivery; a resend or a recovery starts again at 1. An attempt cut off by ' +
        "the service's stop (its `error` starts `stopped:`) is made again under the same number.",
    }),
    status: Type.Unsafe<DeliveryStatusName>({ $ref: 'DeliveryStatus' }),
    trigger: Type.Unsafe<DeliveryTriggerName>({ $ref: 'DeliveryTrigger' }),
    responseStatus: Type.Optional(Type.Integer({ description: "The endpoint's HTTP status, when it answered." })),
    error: Type.Optional(Type.String({ description: 'Why the attempt failed, when it did.' })),
    durationMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'How long the attempt took, in milliseconds: from sending the request to the answer (its status line ' +
          'and as much of its body as is kept) or to the failure (a time-out, a refused connection…). Left out of ' +
          'entries that were no attempt (an expired delivery, one `waitingFor` an earlier event).',
      }),
    ),
    responseBody: Type.Optional(
      Type.String({
        description:
          "What the endpoint's answer said: the first 4 KiB (4096 bytes) of its body, as UTF-8 text; " +
          '`<N bytes, not text>` when those bytes are not text (not valid UTF-8, or holding NUL bytes). Left out ' +
          "when the body was empty or there was no answer. Shown to the endpoint's owner and admins only.",
      }),
    ),
    responseBodyTruncated: Type.Optional(
      Type.Literal(true, { description: 'Set when the body was longer than `responseBody` kept.' }),
    ),
    attemptedAt: Type.String({
      format: 'date-time',
      description:
        'When the attempt started (UTC); for a delivery that expired, when it did; for one waiting for an ' +
        'earlier event (`waitingFor`), when its own event was recorded.',
    }),
    nextAttemptAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When the retry is due, for `pending`; left out while the endpoint is disabled, since nothing is due ' +
          'until it is enabled (what waited is then sent at once).',
      }),
    ),
    waitingFor: Type.Optional(
      Type.String({
        description:
          'Set on the entry of a delivery held back by the endpoint\'s `ordering: "subject"`: the id of the ' +
          'earlier event of the same subject that must succeed, fail for good or expire first. No attempt was ' +
          "made yet; the delivery's first attempt gets an entry of its own once that event is done.",
      }),
    ),
  },
  { $id: 'DeliveryAttempt', additionalProperties: false, description: 'One attempt to deliver one event.' },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

/** The deliveries log's query: its filters bind the cursor, as `status` does the pets list's. */
export const WebhookDeliveriesQuery = Type.Object(
  {
    limit: PageLimit,
    status: filterParameter(DELIVERY_STATUSES, 'Only attempts that ended with this status.'),
    eventId: Type.Optional(EventIdParameter('Only attempts to deliver this event.')),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Opaque position from the `Link: rel="next"` header of the previous page. ' +
          'Valid only with the same `status` and `eventId` filters.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookDeliveriesQuery = Static<typeof WebhookDeliveriesQuery>;
