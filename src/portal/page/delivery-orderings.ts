import type { DeliveryOrdering } from './api-types.js';

/**
 * An endpoint's delivery orders: those of src/domain/delivery-ordering.ts, repeated because the page is
 * compiled apart from the service and imports nothing of it. test/unit/portal-choices.test.ts holds the two
 * together. The default first, so a form reset shows it.
 */
export const DELIVERY_ORDERINGS = ['subject', 'none'] as const satisfies readonly DeliveryOrdering[];

/** What each means, as the forms, the endpoint's page and its card say it. */
export const ORDERING_WORDS: Readonly<Record<DeliveryOrdering, string>> = {
  subject: 'One subject at a time, in order',
  none: 'All at once, any order',
};
