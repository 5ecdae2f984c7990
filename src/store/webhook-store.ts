import type { DeliveryStatus } from '../domain/delivery-status.js';
import type { EventType } from '../domain/event-types.js';
import type { PageQuery } from './store.js';

export interface NewWebhookEndpointRecord {
  readonly url: string;
  /** The event types sent to it; at least one, no repeats. */
  readonly events: readonly EventType[];
  readonly description: string | null;
  /** Standard Webhooks' `whsec_…`: kept as it is, since the service signs with it. */
  readonly secret: string;
  readonly createdAt: Date;
}

/** An endpoint as the store keeps it; the API shows it without its secret (but in the 201 of its creation). */
export interface WebhookEndpointRecord extends NewWebhookEndpointRecord {
  readonly id: number;
  /** Only enabled endpoints get deliveries, and only of events recorded while they are. */
  readonly enabled: boolean;
}

/** A partial update: what is absent is kept; `description: null` clears it. */
export interface WebhookEndpointChange {
  readonly url?: string | undefined;
  readonly events?: readonly EventType[] | undefined;
  readonly enabled?: boolean | undefined;
  readonly description?: string | null | undefined;
}

/** One attempt to deliver one event to one endpoint: a row of the deliveries log. */
export interface DeliveryAttemptRecord {
  readonly id: number;
  readonly eventSeq: number;
  readonly type: EventType;
  /** 1 for the first try. */
  readonly attempt: number;
  readonly status: DeliveryStatus;
  /** The endpoint's HTTP status, when it answered. */
  readonly responseStatus: number | null;
  /** Why the attempt failed, when it did. */
  readonly error: string | null;
  readonly attemptedAt: Date;
  /** When the next try is due, for a `pending` attempt. */
  readonly nextAttemptAt: Date | null;
}

/** A page of the deliveries log, newest first. */
export interface AttemptQuery {
  readonly limit: number;
  /** Only attempts with an id below this one (keyset pagination, descending). */
  readonly beforeId?: number | undefined;
}

/**
 * Webhook endpoints and their deliveries log. Creating, changing and removing an endpoint commit on their
 * own; removing one removes its pending deliveries and its log with it (foreign keys, ON DELETE CASCADE).
 */
export interface WebhookStore {
  create(endpoint: NewWebhookEndpointRecord): Promise<WebhookEndpointRecord>;
  get(id: number): Promise<WebhookEndpointRecord | undefined>;
  /** Endpoints in ascending id order. */
  list(query: PageQuery<never>): Promise<WebhookEndpointRecord[]>;
  /** undefined when there is no such endpoint. */
  update(id: number, change: WebhookEndpointChange): Promise<WebhookEndpointRecord | undefined>;
  /** false when there was no such endpoint. */
  remove(id: number): Promise<boolean>;
  /** One endpoint's attempts, newest (highest id) first; empty for an endpoint that does not exist. */
  attempts(endpointId: number, query: AttemptQuery): Promise<DeliveryAttemptRecord[]>;
}
