import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_DELIVERY_ORDERING,
  DELIVERY_ORDERINGS,
  type DeliveryOrdering,
} from '../../src/domain/delivery-ordering.js';
import {
  DEFAULT_WEBHOOK_SIGNATURE,
  WEBHOOK_SIGNATURES,
  type WebhookSignature,
} from '../../src/domain/webhook-signature.js';
import { DELIVERY_ORDERINGS as PAGE_ORDERINGS } from '../../src/portal/page/delivery-orderings.js';
import { WEBHOOK_SIGNATURES as PAGE_SIGNATURES } from '../../src/portal/page/webhook-signatures.js';

/**
 * The portal page keeps its own lists of the delivery orderings and of the signatures
 * (src/portal/page/delivery-orderings.ts, webhook-signatures.ts: it is compiled apart and imports nothing of
 * the service). These lines hold each list to the service's at compile time: a value added on one side only
 * is a type error here that names it.
 */
const orderingsOnThePage: readonly DeliveryOrdering[] = PAGE_ORDERINGS;
const orderingsOfTheService: readonly (typeof PAGE_ORDERINGS)[number][] = DELIVERY_ORDERINGS;
const signaturesOnThePage: readonly WebhookSignature[] = PAGE_SIGNATURES;
const signaturesOfTheService: readonly (typeof PAGE_SIGNATURES)[number][] = WEBHOOK_SIGNATURES;

test("the portal page offers the service's orderings and signatures, each default first (a reset form shows it)", () => {
  assert.deepEqual([...orderingsOnThePage].sort(), [...orderingsOfTheService].sort());
  assert.equal(orderingsOnThePage[0], DEFAULT_DELIVERY_ORDERING);
  assert.deepEqual([...signaturesOnThePage].sort(), [...signaturesOfTheService].sort());
  assert.equal(signaturesOnThePage[0], DEFAULT_WEBHOOK_SIGNATURE);
});
