import type { OpenAPIV3_2 } from '@fastify/swagger';
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../domain/event-types.js';
import { EVENT_SCHEMAS } from '../schemas/event.js';
import { WebhookTestEvent } from '../schemas/webhook-test.js';

/** The section's type, as @fastify/swagger declares it. */
type Webhooks = NonNullable<OpenAPIV3_2.Document['webhooks']>;

const SIGNATURE_HEADERS: NonNullable<OpenAPIV3_2.PathItemObject['parameters']> = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: "The event's `id`: the same on every attempt. Deduplicate by it.",
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'When this attempt was signed, in Unix seconds. Refuse old ones (the libraries allow 5 minutes).',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks signatures of "{webhook-id}.{webhook-timestamp}.{body}", verified before trusting the ' +
      "body. The endpoint's `signature` says which: `hmac`, `v1,<base64 HMAC-SHA256>` keyed with the " +
      'base64-decoded part of its secret after `whsec_` (the `standardwebhooks` library verifies it); ' +
      '`ed25519`, `v1a,<base64 Ed25519 signature>`, verified with its `publicKey` (`whpk_` + base64 of the raw ' +
      "32 bytes; Node's `crypto.verify`). During a rotation, or a change of `signature`, two are sent, separated " +
      'by a space (the new first): accept the attempt when one verifies.',
    schema: { type: 'string' },
  },
];

/** How every delivery is answered and retried, whatever its type. */
const RETRIES =
  'A 2xx answer within `WEBHOOK_TIMEOUT_MS` (default 10 s) is success; anything else (another status, a ' +
  'time-out, a refused connection, a redirect) is retried after the delays of `WEBHOOK_RETRY_SCHEDULE` ' +
  '(default 5s, 5m, 30m, 2h, 5h, 10h, 10h), then the delivery is `failed`.';

const DELIVERY =
  `Sent to every enabled webhook endpoint subscribed to this type, signed per Standard Webhooks. ${RETRIES} ` +
  'At least once, normally exactly once. With the endpoint\'s `ordering: "subject"` (the default), the events ' +
  'of one `subject` arrive one at a time, in the order they happened: each is sent once the one before it ' +
  'succeeded, failed for good or expired; other subjects go on meanwhile. Resends, recoveries and endpoints ' +
  'with `ordering: "none"` are not ordered: keep the last event id applied per subject.';

const TEST_DELIVERY =
  'Sent to the one endpoint named by `POST /v1/webhooks/{webhookId}/test`, whatever its subscription, signed ' +
  `per Standard Webhooks; never on the feed or the stream. ${RETRIES}`;

/** TypeBox keeps a schema's annotations but does not type them. */
const annotations = (schema: unknown) => schema as { $id: string; description: string };

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, the request the service sends to a
 * subscribed endpoint, and the test send's. The bodies refer to the same schemas the feed uses.
 */
export function webhooksSection(): Webhooks {
  const sent: [string, unknown, string][] = [
    ...EVENT_TYPES.map((type): [string, unknown, string] => [type, EVENT_SCHEMAS[type], DELIVERY]),
    [TEST_EVENT_TYPE, WebhookTestEvent, TEST_DELIVERY],
  ];
  return Object.fromEntries(
    sent.map(([type, schema, description]): [string, OpenAPIV3_2.PathItemObject] => [
      type,
      {
        post: {
          operationId: `${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Webhook`,
          summary: annotations(schema).description,
          description,
          tags: ['webhooks'],
          security: [],
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${annotations(schema).$id}` } } },
          },
          responses: {
            '2XX': { description: 'Received: the delivery succeeded.' },
            default: { description: 'Anything else is retried on the schedule, then marked failed.' },
          },
        },
      },
    ]),
  );
}
