/**
 * How a webhook endpoint's deliveries are ordered (issue 47): `subject`, a subject's events (one pet, one
 * order, one endpoint) one at a time in the order they happened, each waiting until the earlier one has
 * succeeded, failed for good or expired, other subjects in parallel; `none`, every event at once, in any order.
 */
export const DELIVERY_ORDERINGS = ['subject', 'none'] as const;
export type DeliveryOrdering = (typeof DELIVERY_ORDERINGS)[number];

/** What an endpoint registered without `ordering` gets, and what the endpoints from before it have. */
export const DEFAULT_DELIVERY_ORDERING: DeliveryOrdering = 'subject';
