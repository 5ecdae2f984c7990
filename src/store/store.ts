import type { Scope } from '../domain/api-key.js';
import type { OrderStatus } from '../domain/order-status.js';
import type { PetStatus } from '../domain/pet-status.js';
import type { DeliveryStore } from './delivery-store.js';
import type { EventStore } from './event-store.js';
import type { WebhookStore } from './webhook-store.js';

/**
 * The one storage interface. Implementations (SQLite now, PostgreSQL next) pass the same contract
 * suite (test/store/store-contract.test.ts); nothing above this layer knows which one it talks to.
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

export interface PoolStats {
  /** Open connections, idle or in use. */
  readonly open: number;
  readonly idle: number;
  /** Callers waiting for a connection: above zero for long, the pool is too small or the database slow. */
  readonly waiting: number;
  readonly max: number;
}

export interface NewPetRecord {
  readonly name: string;
  readonly categoryId: number;
  readonly status: PetStatus;
}

/** A pet as the store keeps it (the API's Pet is rendered from it). */
export interface PetRecord extends NewPetRecord {
  readonly id: number;
}

/** A keyset page: rows in ascending id order, optionally only those with one status. */
export interface PageQuery<S extends string> {
  /** Rows to return at most. */
  readonly limit: number;
  readonly status?: S | undefined;
  /** Only rows with an id greater than this one (keyset pagination). */
  readonly afterId?: number | undefined;
}

export type PetPageQuery = PageQuery<PetStatus>;

export interface PetStore {
  create(pet: NewPetRecord): Promise<PetRecord>;
  /** create, once per idempotency key: the effect and the stored response commit together. */
  createOnce(pet: NewPetRecord, once: Once<PetRecord>): Promise<OnceResult<PetRecord>>;
  get(id: number): Promise<PetRecord | undefined>;
  /** Pets in ascending id order. */
  list(query: PetPageQuery): Promise<PetRecord[]>;
}

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

/** The response a first request got, kept to answer its retries. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** An idempotency key as the store sees it: who sent it, for which request, and how to answer. */
export interface Once<T> {
  /** The API key (id) that sent it: keys are scoped per API key. */
  readonly owner: number;
  readonly key: string;
  /** A digest of the request (method, route, canonical body): the same key with another request is a mismatch. */
  readonly fingerprint: string;
  readonly now: Date;
  readonly expiresAt: Date;
  /** The response to keep, rendered from the effect inside its transaction. */
  render(result: T): StoredResponse;
}

export type OnceResult<T> =
  | { readonly outcome: 'done'; readonly result: T }
  | { readonly outcome: 'replay'; readonly response: StoredResponse }
  | { readonly outcome: 'mismatch' };

export interface ApiKeyRecord {
  readonly id: number;
  readonly name: string;
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
  readonly prefix: string;
  readonly hash: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt: Date | null;
  readonly createdAt: Date;
}

export interface ApiKeyStore {
  /** Throws DuplicateNameError when an active key already has the name. */
  create(key: NewApiKeyRecord): Promise<ApiKeyRecord>;
  /** Creates the key only when no key exists at all (atomically); undefined otherwise. */
  createFirst(key: NewApiKeyRecord): Promise<ApiKeyRecord | undefined>;
  findByHash(hash: string): Promise<ApiKeyWithHash | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes the active key with this id or name; undefined when there is none. */
  revoke(idOrName: string, at: Date): Promise<ApiKeyRecord | undefined>;
  touch(id: number, at: Date): Promise<void>;
}

export class DuplicateNameError extends Error {
  constructor(name: string) {
    super(`an active key named "${name}" already exists`);
    this.name = 'DuplicateNameError';
  }
}

/** The database cannot be reached or did not answer in time; the request may be retried later. */
export class StoreUnavailableError extends Error {
  #unreported: boolean;

  /**
   * `first` is false when a store knows this failure continues an episode it already reported (SQLite: writes
   * failing since the last commit), so a long one is logged once, not once per request.
   */
  constructor(cause: unknown, first = true, message = 'the database is unavailable') {
    super(message, { cause });
    this.name = 'StoreUnavailableError';
    this.#unreported = first;
  }

  /** True once for the first error of an episode (one error may reach several requests): log that one. */
  shouldReport(): boolean {
    const report = this.#unreported;
    this.#unreported = false;
    return report;
  }
}

/** The database cannot write because its disk is full; reads still work. */
export class StoreFullError extends StoreUnavailableError {
  constructor(cause: unknown, first: boolean) {
    super(cause, first, 'the database cannot write: its disk is full');
    this.name = 'StoreFullError';
  }
}
