/**
 * Where a webhook delivery stands, and what each attempt of it ended as (docs/decisions/every-process-sends.md):
 * `pending` (to be tried, or retried after a failed attempt), `succeeded` (a 2xx), `failed` (the last try).
 */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * The error of the `failed` entry a delivery gets in its endpoint's log when retention removes its event
 * while it is still pending (a disabled endpoint, instances down for long): no attempt is made then.
 */
export const EXPIRED_DELIVERY_ERROR = 'expired: still pending when its event was removed after EVENT_RETENTION_DAYS';

/**
 * The error of a `pending` entry for an attempt the service's stop cut off before the endpoint answered
 * (docs/decisions/dispatcher-stop-and-outages.md): it is due again at once, under the same attempt number.
 */
export const STOPPED_ATTEMPT_ERROR = 'stopped: the service stopped before the endpoint answered; it is sent again';
