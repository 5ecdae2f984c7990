import type { DeliveryOrdering } from './api-types.js';
import { DELIVERY_ORDERINGS, ORDERING_WORDS } from './delivery-orderings.js';
import { el } from './dom.js';

/** The delivery order's control on the forms that create and change an endpoint. */

const HINT =
  'A subject is one pet, one order or one endpoint. In order, each of its events waits until the one before ' +
  'has succeeded, failed for good or expired; other subjects are sent meanwhile.';

/** Fills a select with the orderings, the default first and recommended, and its hint with what they mean. */
export function addOrderingOptions(select: HTMLSelectElement, hint: HTMLParagraphElement): void {
  hint.textContent = HINT;
  for (const ordering of DELIVERY_ORDERINGS) {
    const words =
      ordering === DELIVERY_ORDERINGS[0] ? `${ORDERING_WORDS[ordering]} (recommended)` : ORDERING_WORDS[ordering];
    select.append(el('option', { text: words, attributes: { value: ordering } }));
  }
}

export function chosenOrdering(select: HTMLSelectElement): DeliveryOrdering {
  const chosen = DELIVERY_ORDERINGS.find((ordering) => ordering === select.value);
  if (chosen === undefined) throw new Error(`the page offers no ordering "${select.value}"`);
  return chosen;
}
