import type { DeliveryOrdering } from './api-types.js';
import type { Choices } from './choice-field.js';
import { DELIVERY_ORDERINGS, ORDERING_WORDS } from './delivery-orderings.js';

/** The delivery order's control on the forms that create and change an endpoint. */

export const ORDERINGS: Choices<DeliveryOrdering> = {
  values: DELIVERY_ORDERINGS,
  // The default first, and recommended.
  words: (ordering) =>
    ordering === DELIVERY_ORDERINGS[0] ? `${ORDERING_WORDS[ordering]} (recommended)` : ORDERING_WORDS[ordering],
  hint:
    'A subject is one pet, one order or one endpoint. In order, each of its events waits until the one before ' +
    'has succeeded, failed for good or expired; other subjects are sent meanwhile.',
};
