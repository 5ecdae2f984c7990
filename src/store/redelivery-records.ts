import type { SentEventType } from '../domain/event-types.js';

// What resend, recover and test sends (RedeliveryStore, store.ts) are asked and answer: a leaf beside records.ts.

/** Resend one event to one endpoint (RedeliveryStore.resend): its delivery is queued afresh at `now`. */
export interface ResendQuery {
  readonly endpointId: number;
  readonly eventSeq: number;
  readonly now: Date;
  /**
   * The caller's owner: an event it may not see on the feed (about another owner's endpoint) is
   * `event_not_found`, as one never recorded; every event when undefined (admin keys).
   */
  readonly owner?: string | undefined;
}

/**
 * `pending`: a delivery of the event to the endpoint was pending already (nothing was added). `enabled`: the
 * endpoint's state as the same write saw it; a disabled one's deliveries wait until it is enabled.
 */
export type ResendResult =
  | { readonly outcome: 'queued' | 'pending'; readonly enabled: boolean }
  | { readonly outcome: 'endpoint_not_found' | 'event_not_found' }
  | { readonly outcome: 'not_subscribed'; readonly type: SentEventType };

/** Recover an endpoint's failed deliveries of the events recorded in [since, until). */
export interface RecoverQuery {
  readonly endpointId: number;
  readonly since: Date;
  readonly until: Date;
}

/** How many failed deliveries a recovery queued, and whether the endpoint was enabled as its last write saw it. */
export interface RecoverResult {
  readonly queued: number;
  readonly enabled: boolean;
}

/** A test send to one endpoint (RedeliveryStore.sendTest): its event is recorded and its delivery due at `now`. */
export interface TestSendQuery {
  readonly endpointId: number;
  readonly now: Date;
}

/** The test event's seq, and whether the endpoint was enabled as the write that queued it saw it. */
export interface TestSendResult {
  readonly seq: number;
  readonly enabled: boolean;
}
