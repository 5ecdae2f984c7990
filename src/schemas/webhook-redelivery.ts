import { type Static, Type } from 'typebox';
import { RFC3339_PATTERN, RFC3339_RULE } from '../domain/rfc3339.js';
import { EventIdParameter } from './event-id.js';
import { PATTERN_MESSAGE } from './keywords.js';

export const WebhookResend = Type.Object(
  { eventId: EventIdParameter('The event to send again: its `id` in the feed (and its `webhook-id`).') },
  { $id: 'WebhookResend', additionalProperties: false, description: 'Which event to send to the endpoint again.' },
);
export type WebhookResend = Static<typeof WebhookResend>;

/** On each operation's answer: whether what it queued goes now, or waits for the endpoint to be enabled. */
export const endpointEnabled = () =>
  Type.Boolean({
    description:
      'Whether the endpoint is enabled. `false`: it is disabled (its `disabledReason` says why), and what ' +
      'this queued waits until it is enabled again (`PATCH` with `enabled: true`), then goes at once.',
  });

export const ResendAccepted = Type.Object(
  {
    eventId: Type.String({ description: 'The event, as asked.' }),
    status: Type.Literal('pending', { description: 'Its delivery to the endpoint waits to be sent.' }),
    queued: Type.Boolean({
      description:
        '`true`: this call queued it; `false`: a delivery of it to the endpoint was pending already, and ' +
        'nothing was added (it goes out once).',
    }),
    endpointEnabled: endpointEnabled(),
  },
  {
    $id: 'ResendAccepted',
    additionalProperties: false,
    description:
      'The delivery is queued (or was pending already: then nothing was added). To a disabled endpoint it ' +
      'waits until the endpoint is enabled: `endpointEnabled` says which.',
  },
);
export type ResendAccepted = Static<typeof ResendAccepted>;

const dateTime = (description: string) =>
  Type.String({ pattern: RFC3339_PATTERN, [PATTERN_MESSAGE]: RFC3339_RULE, format: 'date-time', description });

export const WebhookRecovery = Type.Object(
  {
    since: dateTime('Deliveries of events recorded at or after this instant; within `EVENT_RETENTION_DAYS`.'),
    until: Type.Optional(dateTime('And before this one; now by default. Not before `since`.')),
  },
  {
    $id: 'WebhookRecovery',
    additionalProperties: false,
    description: 'The window of event times whose failed deliveries are sent again.',
  },
);
export type WebhookRecovery = Static<typeof WebhookRecovery>;

export const RecoveryAccepted = Type.Object(
  {
    queued: Type.Integer({
      minimum: 0,
      description: 'Failed deliveries queued again, to be sent oldest first; 0 when none was left.',
    }),
    endpointEnabled: endpointEnabled(),
  },
  {
    $id: 'RecoveryAccepted',
    additionalProperties: false,
    description:
      'The failed deliveries are queued. To a disabled endpoint they wait until it is enabled: ' +
      '`endpointEnabled` says which.',
  },
);
export type RecoveryAccepted = Static<typeof RecoveryAccepted>;
