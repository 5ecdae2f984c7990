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

/** "Rate limit: 5 attempts a second", or "Rate limit: none". */
export const endpointRateLimit = ({ rateLimit }: Endpoint) =>
  `Rate limit: ${rateLimit === null ? 'none' : `${rateLimit} ${rateLimit === 1 ? 'attempt' : 'attempts'} a second`}`;

const STATUS_WORDS = { succeeded: 'Succeeded', pending: 'Failed', failed: 'Failed' } as const;

/** What a waiting delivery's event is about, from its type's prefix: "pet" for `pet.updated`. */
const SUBJECT_WORDS: Readonly<Record<string, string>> = { pet: 'pet', order: 'order', webhook_endpoint: 'endpoint' };

export const TRIGGER_WORDS = {
  event: 'sent for its event',
  resend: 'sent again on request',
  recover: 'sent again by a recovery',
  test: 'a test send',
} as const;

/**
 * "Succeeded (answered 204) at …", "Failed (answered 500) at …; to be tried again at …": how an attempt ended,
 * and when; or, for a delivery held back by its endpoint's ordering, which earlier event it waits for. `later`
 * is the next entry of the same event, when the log has one: then what followed is said, never a next try
 * that already happened (or will not).
 */
export function attemptOutcome(attempt: DeliveryAttempt, later?: DeliveryAttempt): Words {
  if (attempt.waitingFor !== undefined) {
    const subject = SUBJECT_WORDS[attempt.type.split('.')[0] ?? ''] ?? 'subject';
    const earlier = [el('code', { text: attempt.waitingFor }), ` (same ${subject})`];
    return later === undefined
      ? ['Waiting for ', ...earlier, ' since ', timeElement(attempt.attemptedAt)]
      : [
          'Waited for ',
          ...earlier,
          ' from ',
          timeElement(attempt.attemptedAt),
          '; sent at ',
          timeElement(later.attemptedAt),
        ];
  }
  // A failure's error says it all, the answer's status included; a success has only its status.
  const detail =
    attempt.error ?? (attempt.responseStatus === undefined ? undefined : `answered ${attempt.responseStatus}`);
  const words: Words = [
    STATUS_WORDS[attempt.status],
    detail === undefined ? '' : ` (${detail})`,
    ' at ',
    timeElement(attempt.attemptedAt),
  ];
  if (attempt.status !== 'pending') return words;
  if (later !== undefined) return [...words, '; tried again at ', timeElement(later.attemptedAt)];
  if (attempt.nextAttemptAt !== undefined)
    return [...words, '; to be tried again at ', timeElement(attempt.nextAttemptAt)];
  return [...words, '; to be tried again once the endpoint is enabled'];
}
