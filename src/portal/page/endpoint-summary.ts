import type { DeliveryAttempt, Endpoint } from './api-types.js';
import { ORDERING_WORDS } from './delivery-orderings.js';
import { el, timeElement } from './dom.js';

/** Words for what the service reports about an endpoint and its attempts, shared by the list and the detail. */

type Words = (Node | string)[];

const DISABLED_BECAUSE = {
  manual: 'Disabled (by a change) since ',
  failing: 'Disabled because every attempt failed for days, since ',
  gone: 'Disabled because the receiver answered 410 Gone, since ',
} as const;

export function endpointState(endpoint: Endpoint, now = Date.now()): Words {
  const words: Words =
    endpoint.enabled || endpoint.disabledReason === null
      ? ['Enabled']
      : [
          DISABLED_BECAUSE[endpoint.disabledReason],
          ...(endpoint.disabledAt === null ? [] : [timeElement(endpoint.disabledAt)]),
        ];
  if (endpoint.pausedUntil !== null && Date.parse(endpoint.pausedUntil) > now) {
    words.push('; paused until ', timeElement(endpoint.pausedUntil), ' (its receiver asked the service to wait)');
  }
  return words;
}

/** "Delivery order: One subject at a time, in order". */
export const endpointOrdering = (endpoint: Endpoint) => `Delivery order: ${ORDERING_WORDS[endpoint.ordering]}`;

const STATUS_WORDS = { succeeded: 'Succeeded', pending: 'Failed, to be retried', failed: 'Failed' } as const;

export const TRIGGER_WORDS = {
  event: 'sent for its event',
  resend: 'sent again on request',
  recover: 'sent again by a recovery',
  test: 'a test send',
} as const;

/**
 * "Succeeded (answered 204) at …", "Failed (answered 500: …) at …": how an attempt ended, and when; or, for a
 * delivery held back by its endpoint's ordering, which earlier event it waits for.
 */
export function attemptOutcome(attempt: DeliveryAttempt): Words {
  if (attempt.waitingFor !== undefined) {
    return [
      'Waiting for the earlier event ',
      el('code', { text: attempt.waitingFor }),
      ' of the same subject, since ',
      timeElement(attempt.attemptedAt),
    ];
  }
  // A failure's error says it all, the answer's status included; a success has only its status.
  const detail =
    attempt.error ?? (attempt.responseStatus === undefined ? undefined : `answered ${attempt.responseStatus}`);
  return [
    STATUS_WORDS[attempt.status],
    detail === undefined ? '' : ` (${detail})`,
    ' at ',
    timeElement(attempt.attemptedAt),
  ];
}
