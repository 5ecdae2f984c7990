import type { EventType } from '../domain/event-types.js';

// What resend and recover (RedeliveryStore, store.ts) are asked and answer: a leaf beside records.ts.

/** Resend one event to one endpoint (RedeliveryStore.resend): its delivery is queued afresh at `now`. */
export interface ResendQuery {
  readonly endpointId: number;
  readonly eventSeq: number;
  readonly now: Date;
}

/** `pending`: a delivery of the event to the endpoint was pending already (nothing was added). */
export type ResendResult =
  | { readonly outcome: 'queued' | 'pending' | 'endpoint_not_found' | 'event_not_found' }
  | { readonly outcome: 'not_subscribed'; readonly type: EventType };

/** Recover an endpoint's failed deliveries of the events recorded in [since, until). */
export interface RecoverQuery {
  readonly endpointId: number;
  readonly since: Date;
  readonly until: Date;
}
