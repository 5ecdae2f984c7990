import { type Static, Type } from 'typebox';
import { TEST_EVENT_TYPE } from '../domain/event-types.js';
import type { Event } from './event.js';
import { Int64 } from './int64.js';
import { endpointEnabled } from './webhook-redelivery.js';

/** The body of a test send (`POST /v1/webhooks/{webhookId}/test`): shaped as every event, with the endpoint's id. */
export const WebhookTestEvent = Type.Object(
  {
    id: Type.String({
      description: 'Unique and opaque (no `.`), as every event id; the `webhook-id` of each attempt. Not on the feed.',
    }),
    type: Type.Literal(TEST_EVENT_TYPE),
    timestamp: Type.String({ format: 'date-time', description: 'When the test send was asked for (UTC).' }),
    data: Type.Object(
      { webhookId: Int64({ minimum: 1, description: 'The endpoint the test was sent to.' }) },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'WebhookTestEvent',
    additionalProperties: false,
    description:
      'A test send: `POST /v1/webhooks/{webhookId}/test` asked for it. Sent to that endpoint alone, whatever ' +
      'its subscription; never on the feed or the stream.',
  },
);
export type WebhookTestEvent = Static<typeof WebhookTestEvent>;

/** What a webhook delivery's body is: an event of the feed, or a test send. */
export type SentEvent = Event | WebhookTestEvent;

export const TestSendAccepted = Type.Object(
  {
    eventId: Type.String({
      description: "The test event's `id`: the `webhook-id` of its attempts, and its `eventId` in the deliveries log.",
    }),
    endpointEnabled: endpointEnabled(),
  },
  {
    $id: 'TestSendAccepted',
    additionalProperties: false,
    description:
      'The test delivery is queued and sent like any other. To a disabled endpoint it waits until the ' +
      'endpoint is enabled: `endpointEnabled` says which.',
  },
);
export type TestSendAccepted = Static<typeof TestSendAccepted>;
