/**
 * Why a delivery was sent (docs/decisions/delivery-log-filters.md): `event`, its event was recorded;
 * `resend`, an operator resent that one event; `recover`, an operator recovered the endpoint's failed
 * deliveries; `test`, a test send. Each attempt in the deliveries log carries its delivery's.
 */
export const DELIVERY_TRIGGERS = ['event', 'resend', 'recover', 'test'] as const;
export type DeliveryTrigger = (typeof DELIVERY_TRIGGERS)[number];
