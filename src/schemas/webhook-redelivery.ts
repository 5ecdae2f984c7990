import { type Static, Type } from 'typebox';
import { EventIdParameter } from './webhook-delivery.js';

export const WebhookResend = Type.Object(
  { eventId: EventIdParameter('The event to send again: its `id` in the feed (and its `webhook-id`).') },
  { $id: 'WebhookResend', additionalProperties: false, description: 'Which event to send to the endpoint again.' },
);
export type WebhookResend = Static<typeof WebhookResend>;

export const ResendAccepted = Type.Object(
  {
    eventId: Type.String({ description: 'The event, as asked.' }),
    status: Type.Literal('pending', { description: 'Its delivery to the endpoint waits to be sent.' }),
  },
  {
    $id: 'ResendAccepted',
    additionalProperties: false,
    description:
      'The delivery is queued (or was pending already: then nothing was added). To a disabled endpoint it ' +
      'waits until the endpoint is enabled.',
  },
);
export type ResendAccepted = Static<typeof ResendAccepted>;
