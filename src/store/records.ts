import type { Scope } from '../domain/api-key.js';
import type { DeliveryStatus } from '../domain/delivery-status.js';
import type { DeliveryTrigger } from '../domain/delivery-trigger.js';
import type { DisabledReason } from '../domain/disabled-reason.js';
import type { EventPosition } from '../domain/event-position.js';
import type { EventType, RuleOf, SentEventType, SubjectOf, TEST_EVENT_TYPE } from '../domain/event-types.js';
import type { OrderStatus } from '../domain/order-status.js';
import type { NewPetFields, PetFields, PetPatch } from '../domain/pet-change.js';
import type { PetStatus } from '../domain/pet-status.js';
import type { SigningSecrets, WebhookEndpointSnapshot } from './webhook-endpoint-records.js';

// The records, queries and answers of the Store interface (store.ts): a leaf, so the store's interface,
// both backends and everything above can name them without importing one another.
// Webhook endpoints' records are in webhook-endpoint-records.ts.

/** A pet to create: its fields, those that may be null left out or not. */
export type NewPetRecord = NewPetFields;

/** A pet as the store keeps it (the API's Pet is rendered from it). */
export interface PetRecord extends PetFields {
  readonly id: number;
  /** 1 on creation, one more with every change: the pet's `ETag`. */
  readonly version: number;
}

/**
 * A pet as an event shows it: its version is unknown for events recorded before pets had versions (their
 * data does not carry one).
 */
export type EventPetRecord = Omit<PetRecord, 'version'> & { readonly version: number | undefined };

/** Why a change of a pet (PetStore.update, remove) was refused; it wrote nothing. */
export type PetChangeRefusal =
  | { readonly outcome: 'pet_not_found' }
  /** `If-Match` named other versions: the pet is at `version` now. */
  | { readonly outcome: 'version_mismatch'; readonly version: number }
  /** An order holds the pet (docs/decisions.md, "Pets you can correct"). */
  | { readonly outcome: 'held'; readonly order: { readonly id: number; readonly status: OrderStatus } };

export type UpdatePetResult =
  /** `previous`: the changed fields' values before; empty when the patch changed nothing (nothing written). */
  { readonly outcome: 'updated'; readonly pet: PetRecord; readonly previous: PetPatch } | PetChangeRefusal;

export type RemovePetResult = { readonly outcome: 'removed'; readonly pet: PetRecord } | PetChangeRefusal;

/** A keyset page: rows in ascending id order, optionally only those with one status. */
export interface PageQuery<S extends string> {
  /** Rows to return at most. */
  readonly limit: number;
  readonly status?: S | undefined;
  /** Only rows with an id greater than this one (keyset pagination). */
  readonly afterId?: number | undefined;
}

export type PetPageQuery = PageQuery<PetStatus>;

export interface OrderRecord {
  readonly id: number;
  readonly petId: number;
  readonly quantity: number;
  readonly status: OrderStatus;
  readonly createdAt: Date;
}

export interface NewOrderRecord {
  readonly petId: number;
  readonly quantity: number;
  readonly createdAt: Date;
}

export type OrderPageQuery = PageQuery<OrderStatus>;

export type PlaceOrderResult =
  | { readonly outcome: 'placed'; readonly order: OrderRecord }
  | { readonly outcome: 'pet_not_found' }
  | { readonly outcome: 'pet_not_available'; readonly petStatus: PetStatus };

export type ChangeOrderResult =
  | { readonly outcome: 'changed'; readonly order: OrderRecord }
  | { readonly outcome: 'order_not_found' }
  | { readonly outcome: 'refused'; readonly from: OrderStatus };

export interface ApiKeyRecord {
  readonly id: number;
  readonly name: string;
  /** Whose webhook endpoints the key manages (src/domain/owner.ts). */
  readonly owner: string;
  /** The first characters of the key, safe to show. */
  readonly prefix: string;
  readonly scopes: readonly Scope[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

export interface ApiKeyWithHash extends ApiKeyRecord {
  readonly hash: string;
}

export interface NewApiKeyRecord {
  readonly name: string;
  readonly owner: string;
  readonly prefix: string;
  readonly hash: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt: Date | null;
  readonly createdAt: Date;
}

/** What a change of type T keeps of its subject, as the change left it. */
interface Subjects<T extends EventType> {
  readonly pet: { readonly pet: RuleOf<T> extends { unversioned: true } ? EventPetRecord : PetRecord };
  readonly order: { readonly order: OrderRecord };
  readonly webhook_endpoint: { readonly endpoint: WebhookEndpointSnapshot };
}

/** What a change of type T keeps of its subject before the change, as its entry in EVENT_RULES says. */
type Before<T extends EventType> =
  RuleOf<T> extends { previous: 'status' }
    ? { readonly previousStatus: { pet: PetStatus; order: OrderStatus; webhook_endpoint: never }[SubjectOf<T>] }
    : RuleOf<T> extends { previous: 'fields' }
      ? { readonly previous: PetPatch }
      : unknown;

/** One change, as the write that made it records it (the records are the state after the change). */
type Change = { [T in EventType]: { readonly type: T } & Subjects<T>[SubjectOf<T>] & Before<T> }[EventType];

/**
 * A recorded change: its feed position, its sequence number (the event id's), what it is about (`pet/12`:
 * its type's prefix and its data's id) and when it was recorded.
 */
export type EventRecord = Change & {
  readonly seq: number;
  readonly subject: string;
  readonly position: EventPosition;
  readonly at: Date;
};

/** A test send's event (RedeliveryStore.sendTest): in its endpoint's deliveries only, never on the feed. */
interface TestEventRecord {
  readonly type: typeof TEST_EVENT_TYPE;
  readonly webhookId: number;
  readonly seq: number;
  readonly at: Date;
}

/** What a delivery carries: an event of the feed, or a test send's. */
export type SentEventRecord = EventRecord | TestEventRecord;

export interface EventQuery {
  /** Events after this position; from the oldest kept when undefined. */
  readonly after: EventPosition | undefined;
  readonly limit: number;
  readonly type?: EventType | undefined;
  /** Events about endpoints of this owner only (with every event about pets and orders); all when undefined. */
  readonly owner?: string | undefined;
}

/** What one retention purge did (EventStore.purge). */
export interface PurgeResult {
  /** Events removed, with their deliveries. */
  readonly events: number;
  /**
   * Deliveries still pending when their event was removed (queued, or owed to an enabled endpoint and not
   * queued yet): each ended `failed`, with an entry in its endpoint's deliveries log.
   */
  readonly expired: number;
}

export type EventPage =
  | { readonly outcome: 'page'; readonly events: EventRecord[] }
  /** Events after the position were removed by retention: reading on would skip them. */
  | { readonly outcome: 'gone' }
  /**
   * The position is in history a restore from a backup lost (after the backup's last event): the events
   * after it were, or may have been, others than the feed now holds.
   */
  | { readonly outcome: 'restored' };

/** What the dispatcher asks for: due deliveries, within its concurrency limits. */
export interface ClaimQuery {
  readonly now: Date;
  /** How long the claim holds: no instance claims the delivery again before now + leaseMs. */
  readonly leaseMs: number;
  /** Deliveries to claim at most. */
  readonly limit: number;
  /** Deliveries to take per endpoint at most (its free slots), by endpoint id. */
  readonly free: ReadonlyMap<number, number>;
  /** Deliveries to take at most of an endpoint not in `free`. */
  readonly freeOtherwise: number;
  /** Owners at their share of the slots: their endpoints not in `free` get none (docs/decisions/owner-slot-share.md). */
  readonly fullOwners: readonly string[];
}

/** A claimed delivery, with everything its attempt needs. */
export interface DueDelivery {
  readonly id: number;
  /** The number of this attempt: 1 for the first. */
  readonly attempt: number;
  /** The claim: the delivery is ours until then, and finish() records only while it still is. */
  readonly claimedUntil: Date;
  readonly endpoint: {
    readonly id: number;
    readonly owner: string;
    readonly url: string;
    /** Attempts started a second at most (src/domain/start-window.ts); null: no limit. */
    readonly rateLimit: number | null;
  } & SigningSecrets;
  readonly event: SentEventRecord;
  /** The trace its event's change was made in, as a W3C traceparent (null: none recorded). */
  readonly trace: string | null;
}

/** How one attempt ended, and where the delivery stands after it. */
export interface AttemptOutcome {
  readonly delivery: DueDelivery;
  readonly status: DeliveryStatus;
  readonly responseStatus: number | undefined;
  readonly error: string | undefined;
  /** How long it took, in whole milliseconds, to the answer or the failure. */
  readonly durationMs?: number | undefined;
  /** The first 4 KiB of the answer's body, as text (or what it was, when not text); undefined: none. */
  readonly responseBody?: string | undefined;
  /** The answer's body was longer than responseBody kept. */
  readonly responseBodyTruncated?: boolean | undefined;
  /** When the attempt started (its webhook-timestamp). */
  readonly attemptedAt: Date;
  /** When the next attempt is due, for `pending`. */
  readonly nextAttemptAt: Date | undefined;
  /** The endpoint asked for no attempt before this (Retry-After): none of its deliveries is claimed until then. */
  readonly pausedUntil: Date | undefined;
  /** The endpoint answered 410 Gone: it is disabled as the attempt is recorded. */
  readonly gone: boolean;
  /**
   * A failed attempt disables its endpoint as it is recorded if every attempt since this time or earlier
   * failed (WEBHOOK_DISABLE_AFTER before it); undefined: failing never disables.
   */
  readonly disableIfFailingSince: Date | undefined;
  /**
   * The service's stop cut the attempt off before an answer: it says nothing of the endpoint, so its health
   * is left as it was, and the delivery's attempts are not counted on (the next is made under this number).
   */
  readonly stopped: boolean;
}

/** Whether finish() recorded the attempt; a reason when the endpoint was disabled with it (once per endpoint). */
export type AttemptRecorded = boolean | Exclude<DisabledReason, 'manual'>;

export interface DeliveryStats {
  /** Deliveries waiting for an attempt to an enabled endpoint. */
  readonly pending: number;
  /** How long the oldest of them has waited since its event, in seconds; 0 when none waits. */
  readonly oldestPendingSeconds: number;
}

/** One attempt to deliver one event to one endpoint: a row of the deliveries log. */
export interface DeliveryAttemptRecord {
  readonly id: number;
  readonly eventSeq: number;
  readonly type: SentEventType;
  /** 1 for the first try. */
  readonly attempt: number;
  readonly status: DeliveryStatus;
  /** The endpoint's HTTP status, when it answered. */
  readonly responseStatus: number | null;
  /** Why the attempt failed, when it did. */
  readonly error: string | null;
  /** How long the attempt took, in milliseconds; null on an entry that was no attempt (or recorded before). */
  readonly durationMs: number | null;
  /** What the endpoint's answer's body began with, when it had one (see AttemptOutcome). */
  readonly responseBody: string | null;
  readonly responseBodyTruncated: boolean;
  readonly attemptedAt: Date;
  /** When the next try is due, for a `pending` attempt. */
  readonly nextAttemptAt: Date | null;
  /** Why its delivery was sent. */
  readonly trigger: DeliveryTrigger;
  /**
   * Set on the entry of a delivery queued behind an earlier event of its subject, which it waits for (no
   * attempt was made yet): that event's seq.
   */
  readonly waitingFor: number | null;
}

/** A page of the deliveries log, newest first, optionally only the attempts of one status, or of one event. */
export interface AttemptQuery {
  readonly limit: number;
  /** Only attempts with an id below this one (keyset pagination, descending). */
  readonly beforeId?: number | undefined;
  readonly status?: DeliveryStatus | undefined;
  readonly eventSeq?: number | undefined;
}

/** A claimed delivery given back unattempted (its endpoint's rate limit held it), due again at `until`. */
export interface HeldBackDelivery {
  readonly delivery: DueDelivery;
  readonly until: Date;
}
