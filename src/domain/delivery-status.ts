/**
 * Where a webhook delivery stands, and what each attempt of it ended as (docs/decisions.md, "Webhook delivery"):
 * `pending` (to be tried, or retried after a failed attempt), `succeeded` (a 2xx), `failed` (the last try).
 */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
