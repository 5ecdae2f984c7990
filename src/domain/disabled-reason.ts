/**
 * Why an endpoint is disabled: `manual` when a PATCH disabled it; `failing` (every attempt failed for
 * WEBHOOK_DISABLE_AFTER) and `gone` (it answered 410 Gone) when the service did
 * (docs/decisions/endpoint-health.md).
 */
export const DISABLED_REASONS = ['failing', 'gone', 'manual'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];
