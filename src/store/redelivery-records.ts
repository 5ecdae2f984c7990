import type { SentEventType } from '../domain/event-types.js';

// What resend, recover and test sends (RedeliveryStore, store.ts) are asked and answer: a leaf beside records.ts.

/** Resend one event to one endpoint (RedeliveryStore.resend): its delivery is queued afresh at `now`. */
export interface ResendQuery {
  readonly endpointId: number;
  readonly eventSeq: number;
  readonly now: Date;
}

/** `pending`: a delivery of the event to the endpoint was pending already (nothing was added). */
export type ResendResult =
  | { readonly outcome: 'queued' | 'pending' | 'endpoint_not_found' | 'event_not_found' }
  | { readonly outcome: 'not_subscribed'; readonly type: SentEventType };

/** Recover an endpoint's failed deliveries of the events recorded in [since, until). */
export interface RecoverQuery {
  readonly endpointId: number;
  readonly since: Date;
  readonly until: Date;
}

/** A test send to one endpoint (RedeliveryStore.sendTest): its event is recorded and its delivery due at `now`. */
export interface TestSendQuery {
  readonly endpointId: number;
  readonly now: Date;
}
