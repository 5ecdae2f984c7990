import type { AuditContext, NewAuditEntry } from '../domain/audit.js';
import type { EventPosition } from '../domain/event-position.js';
import type { OrderStatus } from '../domain/order-status.js';
import type { PetPatch } from '../domain/pet-change.js';
import type { StartGrant } from '../domain/start-window.js';
import type { AuditEntryRecord, AuditQuery } from './audit-records.js';
import type { Once, OnceResult } from './once-records.js';
import type {
  ApiKeyRecord,
  ApiKeyWithHash,
  AttemptOutcome,
  AttemptQuery,
  AttemptRecorded,
  ChangeOrderResult,
  ClaimQuery,
  DeliveryAttemptRecord,
  DeliveryStats,
  DueDelivery,
  EventPage,
  EventQuery,
  EventRecord,
  HeldBackDelivery,
  NewApiKeyRecord,
  NewOrderRecord,
  NewPetRecord,
  OrderPageQuery,
  OrderRecord,
  PetPageQuery,
  PetRecord,
  PlaceOrderResult,
  PurgeResult,
  RemovePetResult,
  UpdatePetResult,
} from './records.js';
import type {
  RecoverQuery,
  RecoverResult,
  ResendQuery,
  ResendResult,
  TestSendQuery,
  TestSendResult,
} from './redelivery-records.js';
import type {
  EndpointPageQuery,
  NewWebhookEndpointRecord,
  SecretRotation,
  SigningSecrets,
  WebhookEndpointChange,
  WebhookEndpointRecord,
} from './webhook-endpoint-records.js';

/**
 * The one storage interface, by entity; its records are in records.ts. Both backends (sqlite/,
 * postgres/) pass the same contract suites (test/store/*-contract.test.ts); nothing above this layer
 * knows which one it talks to.
 */
export interface Store {
  readonly kind: string;
  readonly pets: PetStore;
  readonly orders: OrderStore;
  readonly apiKeys: ApiKeyStore;
  /** The outbox: the events every change of pets and orders records in its own transaction. */
  readonly events: EventStore;
  /** Webhook endpoints and their deliveries log. */
  readonly webhooks: WebhookStore;
  /** Webhook deliveries: claimed, attempted and recorded by the dispatcher (src/webhooks/). */
  readonly deliveries: DeliveryStore;
  /** Deliveries an operator asks to be sent again: one event, or an endpoint's failed ones. */
  readonly redeliveries: RedeliveryStore;
  /** Without Redis, the rate limits of endpoints, shared by every instance on the database. */
  readonly endpointStarts: EndpointStartStore;
  /** Who changed what: each change of endpoints and keys writes its entry in its own transaction. */
  readonly audit: AuditLogStore;
  /** Removes idempotency records that expired before `now`; returns how many. */
  purgeExpiredIdempotencyKeys(now: Date): Promise<number>;
  /** A random secret shared by every instance on this database, created on first use. */
  secret(name: string): Promise<Buffer>;
  /**
   * Resolves when the database answers a trivial query and, once writes failed for a full disk, only when a
   * write commits again (SQLite tries one).
   */
  ping(): Promise<void>;
  /**
   * A value that changes whenever any committed write (by this process or another) may have changed what a
   * read returns. A read started after the token was read returns that state or a newer one, so caches key
   * what they read on the token read before it; equal tokens mean no write in between.
   */
  changeToken(): Promise<string>;
  /** The connection pool's state, for /metrics; undefined for a store without a pool (SQLite). */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export interface PetStore {
  create(pet: NewPetRecord): Promise<PetRecord>;
  /** create, once per idempotency key: the effect and the stored response commit together. */
  createOnce(pet: NewPetRecord, once: Once<PetRecord>): Promise<OnceResult<PetRecord>>;
  get(id: number): Promise<PetRecord | undefined>;
  /** Pets in ascending id order. */
  list(query: PetPageQuery): Promise<PetRecord[]>;
  /**
   * Applies the patch if the pet is at one of the `expected` versions (any, when undefined), and its status
   * only while no order holds the pet (placed or approved). A change of any field adds one to the version
   * and records `pet.updated`, and `pet.status_changed` after it when the status moved, in the same
   * transaction; a patch that changes no field writes and records nothing. The check and the write are one
   * transaction holding the pet, so of concurrent changes expecting one version exactly one applies, on any
   * number of instances, and an order placed at the same instant either sees the change or refuses it.
   */
  update(id: number, patch: PetPatch, expected: readonly number[] | undefined): Promise<UpdatePetResult>;
  /**
   * Removes the pet if it is at one of the `expected` versions (any, when undefined) and no order holds it,
   * recording `pet.deleted` (the pet as it was) in the same transaction. Its orders keep their pet id.
   */
  remove(id: number, expected: readonly number[] | undefined): Promise<RemovePetResult>;
}

/**
 * Orders, and the pet status moves they drive (src/domain/order-status.ts), each applied atomically:
 * of many concurrent orders for one pet exactly one is placed, on any number of instances.
 */
export interface OrderStore {
  /** Places the order if its pet is available, moving the pet to pending in the same transaction. */
  place(order: NewOrderRecord): Promise<PlaceOrderResult>;
  /** place, once per idempotency key; only a placed order is remembered (a refusal wrote nothing). */
  placeOnce(order: NewOrderRecord, once: Once<OrderRecord>): Promise<OnceResult<PlaceOrderResult>>;
  get(id: number): Promise<OrderRecord | undefined>;
  /** Orders in ascending id order. */
  list(query: OrderPageQuery): Promise<OrderRecord[]>;
  /** Moves the order if the state machine allows it, and its pet with it, in one transaction. */
  changeStatus(id: number, to: OrderStatus): Promise<ChangeOrderResult>;
}

/**
 * API keys. Each change of a key or a portal link writes its audit entry (`api_key.created`, …) in the
 * same transaction, with the actor `audit` names.
 */
export interface ApiKeyStore {
  /** Throws DuplicateNameError when an active key already has the name. */
  create(key: NewApiKeyRecord, audit: AuditContext): Promise<ApiKeyRecord>;
  /** Creates the key only when no key exists at all (atomically); undefined otherwise. */
  createFirst(key: NewApiKeyRecord, audit: AuditContext): Promise<ApiKeyRecord | undefined>;
  findByHash(hash: string): Promise<ApiKeyWithHash | undefined>;
  findById(id: number): Promise<ApiKeyRecord | undefined>;
  /**
   * Records that the portal link `linkId` (valid until `expiresAt`) was traded for a session: true the first
   * time (writing `opened`, the session's audit entry, with it), false ever after, across instances. Links
   * past their time are forgotten in the same write.
   */
  redeemLink(linkId: string, expiresAt: Date, opened: NewAuditEntry): Promise<boolean>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes the active key with this id or name; undefined when there is none. */
  revoke(idOrName: string, at: Date, audit: AuditContext): Promise<ApiKeyRecord | undefined>;
  touch(id: number, at: Date): Promise<void>;
}

/**
 * The outbox, read side: every write of pets and orders records its events in its own transaction (the
 * write side lives with each entity store), and the feed reads them here.
 */
export interface EventStore {
  /** Events after a position, oldest first: only ones that no event committed later can precede. */
  list(query: EventQuery): Promise<EventPage>;
  /**
   * The event with this seq, if it is kept, is on the feed (not a test send's) and the owner `owner` sees it
   * (as EventQuery.owner: every event when undefined); else undefined.
   */
  get(seq: number, owner: string | undefined): Promise<EventRecord | undefined>;
  /** The position of the newest event shown now: reading after it misses nothing committed later. */
  head(): Promise<EventPosition>;
  /**
   * Retention: removes the events recorded before `before`, with their deliveries, and the deliveries log's
   * entries of attempts made before it. A delivery still pending when its event goes is never dropped
   * silently: it gets a `failed` entry in its endpoint's log, made at `now` (so kept as long again), and is
   * counted. In batches, each its own short write.
   */
  purge(before: Date, now: Date): Promise<PurgeResult>;
  /**
   * Calls `onChange` soon after events may have become visible, committed by this process or another, until
   * the returned function is called. It may also call it when nothing changed. Each call watches on its own
   * (a timer; on PostgreSQL also a connection): one per process serves every stream (src/events/feed-bell.ts).
   */
  watch(onChange: () => void): () => void;
}

/**
 * Webhook endpoints and their deliveries log. Creating, changing and removing an endpoint commit on their
 * own; removing one removes its deliveries (foreign keys, ON DELETE CASCADE) and its log with it. Each of
 * these writes its audit entry in the same transaction, by the actor `audit` names
 * (store/shared/endpoint-audit.ts); a change that changes nothing writes none.
 */
export interface WebhookStore {
  /**
   * Creates the endpoint unless its owner has `perOwner` endpoints already (undefined then): atomic across
   * instances, so owners racing at the bound never pass it.
   */
  create(
    endpoint: NewWebhookEndpointRecord,
    perOwner: number,
    audit: AuditContext,
  ): Promise<WebhookEndpointRecord | undefined>;
  get(id: number): Promise<WebhookEndpointRecord | undefined>;
  /** Endpoints in ascending id order: one owner's, or every owner's when the query names none. */
  list(query: EndpointPageQuery): Promise<WebhookEndpointRecord[]>;
  /** undefined when there is no such endpoint. */
  update(id: number, change: WebhookEndpointChange, audit: AuditContext): Promise<WebhookEndpointRecord | undefined>;
  /**
   * Makes `rotation.secret` the one that signs, and the secret it replaces the previous one, dropping any
   * older previous secret, in one statement: two secrets at most sign at once. undefined when there is no
   * such endpoint.
   */
  rotateSecret(id: number, rotation: SecretRotation, audit: AuditContext): Promise<WebhookEndpointRecord | undefined>;
  /** false when there was no such endpoint. */
  remove(id: number, audit: AuditContext): Promise<boolean>;
  /** One endpoint's attempts, newest (highest id) first; empty for an endpoint that does not exist. */
  attempts(endpointId: number, query: AttemptQuery): Promise<DeliveryAttemptRecord[]>;
}

/**
 * Webhook deliveries, sending side: a pending delivery per (event, endpoint subscribed and enabled when the
 * event was recorded) is queued by the claims after the event's commit (sqlite/fan-out.ts,
 * postgres/fan-out.ts); instances claim due ones (a lease, so no two send
 * one at once), attempt them, and record each attempt. A delivery to a disabled endpoint waits, pending,
 * and goes out once the endpoint is enabled again.
 */
export interface DeliveryStore {
  /**
   * Claims due pending deliveries (next_attempt_at reached, no live claim) to enabled endpoints, each
   * endpoint's oldest due first and endpoints in turn, until now + leaseMs. Atomic across instances: a
   * delivery is claimed by one caller at a time. When less is queued than it could take (or a while after
   * the last time), it first queues some of what was recorded since for the endpoints it may take from
   * (QUEUE_PER_STEP).
   */
  claim(query: ClaimQuery): Promise<DueDelivery[]>;
  /**
   * True when a claim now would find no endpoint to queue for or claim from (none enabled, none owed), as
   * far as this process knows without asking: then a change recorded here need not wake the dispatcher,
   * whose poll still claims (and learns of endpoints other instances made). False when it cannot tell.
   */
  unreached(): boolean;
  /**
   * In one transaction: records the attempt in the deliveries log and moves the delivery on. Only while
   * the claim is still ours: false (nothing recorded) once another claim replaced it, or the delivery is gone.
   * In the same transaction, the endpoint's health: a success ends its failing, a failure starts it, and a
   * 410 or failing since `disableIfFailingSince` disables it (if enabled) and records `webhook_endpoint.disabled`.
   */
  finish(outcome: AttemptOutcome): Promise<AttemptRecorded>;
  /**
   * Gives back claims of deliveries not attempted (claimed ahead, and the dispatcher stopped): each is due
   * again at once for any claim, its attempts unchanged. Only while the claim is still the one given.
   */
  release(deliveries: readonly DueDelivery[]): Promise<void>;
  /** The endpoints' signing secrets now, by id (one read for many attempts); an endpoint gone is absent. */
  signingSecrets(endpointIds: readonly number[]): Promise<Map<number, SigningSecrets>>;
  stats(now: Date): Promise<DeliveryStats>;
}

/**
 * Endpoints' rate limits through the database (docs/decisions/endpoint-rate-limit.md): the starts of each
 * limited endpoint's last second, which every instance reads and writes under a lock.
 */
export interface EndpointStartStore {
  /**
   * Atomically across instances: takes up to `wanted` starts for an endpoint limited to `limit` a second
   * (takeStarts, src/domain/start-window.ts), logged at the time the endpoint's lock is held.
   */
  take(endpointId: number, limit: number, wanted: number): Promise<StartGrant>;
  /**
   * The starts of `grant`, logged at `from` (its time, or the one it was last moved to), were made by
   * `madeAt`: counted from then (moveStarts).
   */
  made(endpointId: number, grant: StartGrant, from: number, madeAt: number): Promise<void>;
  /**
   * Gives claimed deliveries back unattempted, each due again at its `until`: no attempt is recorded or
   * counted, the endpoint's health is untouched. Only while the claim is still the caller's.
   */
  holdBack(deliveries: readonly HeldBackDelivery[]): Promise<void>;
}

/**
 * Sending deliveries again (docs/decisions/resend.md, docs/decisions/recover.md): each is queued as pending with its
 * attempts starting afresh, under the same delivery (so the same `webhook-id`), and the dispatcher's
 * claims send it. A delivery already pending is left as it is, so nothing is sent twice. A disabled
 * endpoint's are queued too; they wait until it is enabled.
 */
export interface RedeliveryStore {
  /**
   * Queues the event's delivery to the endpoint again, whatever its earlier outcome, if the event is kept
   * and of a type the endpoint subscribes to. `pending` when one is pending already, or owed to the enabled
   * endpoint and not queued yet (fan-out queues it).
   */
  resend(query: ResendQuery): Promise<ResendResult>;
  /**
   * Queues again every delivery to the endpoint whose last attempt failed and whose event was recorded in
   * [since, until), due at its event's time so the oldest go first; in writes of a bounded number of rows.
   * Returns how many it queued (a delivery queued by another call at once is counted by that one only);
   * undefined when the endpoint does not exist.
   */
  recover(query: RecoverQuery): Promise<RecoverResult | undefined>;
  /**
   * Records a test event (`webhook.test`, data: the endpoint's id) and queues its delivery to the endpoint
   * alone, due at `now`, in one write: never on the feed, its head or its stream (docs/decisions/test-send.md). The
   * test event's seq; undefined when the endpoint does not exist.
   */
  sendTest(query: TestSendQuery): Promise<TestSendResult | undefined>;
}

/** The audit log's own calls: an entry of a change that writes nothing else, the pages, and retention. */
export interface AuditLogStore {
  /** Writes one entry on its own: for a change that is nothing but its entry (a portal link made). */
  record(entry: NewAuditEntry): Promise<void>;
  /** Entries newest (highest id) first. */
  list(query: AuditQuery): Promise<AuditEntryRecord[]>;
  /** Removes the entries made before `before`, in batches, each its own short write; how many. */
  purge(before: Date): Promise<number>;
}

export interface PoolStats {
  /** Open connections, idle or in use. */
  readonly open: number;
  readonly idle: number;
  /** Callers waiting for a connection: above zero for long, the pool is too small or the database slow. */
  readonly waiting: number;
  readonly max: number;
}
