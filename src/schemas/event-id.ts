import { Type } from 'typebox';
import { PATTERN_MESSAGE } from './keywords.js';

/** An event's id as the feed shows it: `evt_` and its sequence number (15 digits at most: within int53). */
const EVENT_ID_PATTERN = '^evt_[1-9][0-9]{0,14}$';

/** An event id in a request; `description` says what it selects. */
export const EventIdParameter = (description: string) =>
  Type.String({
    pattern: EVENT_ID_PATTERN,
    [PATTERN_MESSAGE]: 'must be an event id, as the feed shows it (evt_ and a number, such as evt_12)',
    description,
  });

/** `GET /v1/events/{eventId}`'s path. */
export const EventIdParams = Type.Object({
  eventId: EventIdParameter('The event: its `id` in the feed, and the `eventId` of its webhook attempts.'),
});
