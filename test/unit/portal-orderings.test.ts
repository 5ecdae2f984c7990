import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_DELIVERY_ORDERING,
  DELIVERY_ORDERINGS,
  type DeliveryOrdering,
} from '../../src/domain/delivery-ordering.js';
import { DELIVERY_ORDERINGS as PAGE_ORDERINGS } from '../../src/portal/page/delivery-orderings.js';

/**
 * The portal page keeps its own list of the delivery orderings (src/portal/page/delivery-orderings.ts: it is
 * compiled apart and imports nothing of the service). These two lines hold the lists to the same values at
 * compile time: one added on one side only is a type error here that names it.
 */
const onThePage: readonly DeliveryOrdering[] = PAGE_ORDERINGS;
const ofTheService: readonly (typeof PAGE_ORDERINGS)[number][] = DELIVERY_ORDERINGS;

test("the portal page offers the service's orderings, the default first (a reset form shows it)", () => {
  assert.deepEqual([...onThePage].sort(), [...ofTheService].sort());
  assert.equal(onThePage[0], DEFAULT_DELIVERY_ORDERING);
});
