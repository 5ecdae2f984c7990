/** What an event says changed (docs/decisions.md, "Events"): the feed, the stream and webhooks share these. */
export const EVENT_TYPES = ['pet.created', 'pet.status_changed', 'order.placed', 'order.status_changed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
