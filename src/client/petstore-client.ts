import { setTimeout as sleep } from 'node:timers/promises';
import type { AuditEntry, AuditLogQuery } from '../schemas/audit-log.js';
import type { Event, ListEventsQuery as ListEventsQuerySchema } from '../schemas/event.js';
import type { ListOrdersQuery as ListOrdersQuerySchema, NewOrder, Order, OrderStatusChange } from '../schemas/order.js';
import type { ListPetsQuery as ListPetsQuerySchema, NewPet, Pet, PetChange } from '../schemas/pet.js';
import type { PortalLink, PortalLinkRequest } from '../schemas/portal-link.js';
import type {
  ChangedWebhookEndpoint,
  CreatedWebhookEndpoint,
  NewWebhookEndpoint,
  RotatedWebhookSecret,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookPageQuery,
  WebhookSecretRotation,
} from '../schemas/webhook.js';
import type {
  DeliveryAttempt,
  WebhookDeliveriesQuery as WebhookDeliveriesQuerySchema,
} from '../schemas/webhook-delivery.js';
import type { RecoveryAccepted, ResendAccepted, WebhookRecovery } from '../schemas/webhook-redelivery.js';
import type { TestSendAccepted } from '../schemas/webhook-test.js';
import { everyItem, nextCursor, type Page } from './page.js';
import { type Call, Transport } from './transport.js';

export interface PetstoreClientOptions {
  /**
   * The service's address, e.g. `http://127.0.0.1:8080` (what `npm start` serves) or `https://pets.example.com`.
   * The client adds the `/v1/…` paths; an address already ending in `/v1` (OpenAPI's `servers` URL) works too.
   */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string;
  /** How many times a failed attempt is retried when that is safe (see the README's "Retries"); 0 never retries. Default 3. */
  readonly retries?: number | undefined;
  /** How long one attempt may take, response body included, before it fails with `timeout`. Default 30 000. */
  readonly timeoutMs?: number | undefined;
  /** Replaces the global `fetch` (tests, custom agents). */
  readonly fetch?: typeof fetch | undefined;
}

export interface CallOptions {
  /** Aborting it ends the call, waits between retries included, with the `aborted` error. */
  readonly signal?: AbortSignal | undefined;
}

export interface CreateOptions extends CallOptions {
  /**
   * The `Idempotency-Key` sent on every attempt (1 to 255 printable ASCII characters); a random UUID when absent.
   * Pass your own to make retries of your own safe too: within 24 h the service answers a repeat with the first
   * response and creates nothing new.
   */
  readonly idempotencyKey?: string | undefined;
}

export interface ConditionalOptions extends CallOptions {
  /**
   * Sent as `If-Match`: the `etag` of the pet as you read it (or as an event told it). The change applies only if
   * the pet is still at that version; otherwise it rejects with 412 `precondition_failed` and nothing changes.
   */
  readonly ifMatch?: string | undefined;
}

/**
 * A pet with its `ETag`, the version to send back as `ifMatch`. `etag` is not enumerable: `JSON.stringify`, a
 * spread and `deepEqual` see the Pet alone, as the service sent it.
 */
export type WithEtag<T> = T & { readonly etag: string };

/** Every parameter optional, and `undefined` accepted for "not given" (handy when passing `nextCursor` along). */
type Loose<T> = { readonly [K in keyof T]?: T[K] | undefined };

/** `listPets` parameters, from the route's schema: `limit` (1–100, default 20), `status`, `cursor`. */
export type ListPetsQuery = Loose<ListPetsQuerySchema>;
/** `listOrders` parameters, from the route's schema: `limit` (1–100, default 20), `status`, `cursor`. */
export type ListOrdersQuery = Loose<ListOrdersQuerySchema>;

/** `listEvents` parameters, from the route's schema: `limit` (1–100, default 20), `type`, `cursor`. */
export type ListEventsQuery = Loose<ListEventsQuerySchema>;

/** `listWebhookEndpoints` parameters: `limit` (1–100, default 20), `owner` (an admin key's filter), `cursor`. */
export type ListWebhookEndpointsQuery = Loose<WebhookPageQuery>;

/** `listWebhookDeliveries` parameters: `limit` (1–100, default 20), `status`, `eventId`, `cursor`. */
export type ListWebhookDeliveriesQuery = Loose<WebhookDeliveriesQuerySchema>;

/** `listAuditLog` parameters: `limit` (1–100, default 20), `action`, `target` (`kind/id`), `since`, `owner`, `cursor`. */
export type ListAuditLogQuery = Loose<AuditLogQuery>;

export interface EventsOptions extends CallOptions {
  /**
   * Keep reading once the feed is exhausted: poll it every `pollIntervalMs` and yield each new event, until
   * `signal` aborts. Without it the iteration ends at the newest event.
   */
  readonly follow?: boolean | undefined;
  /** Between polls when following. Default 1000. */
  readonly pollIntervalMs?: number | undefined;
}

const DEFAULT_RETRIES = 3;
const DEFAULT_POLL_INTERVAL_MS = 1000;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The petstore API, typed from the service's own schemas. Every failure rejects with a `PetstoreError`.
 * Failures that are safe to repeat are retried with backoff, honouring `Retry-After`.
 */
export class PetstoreClient {
  readonly #transport: Transport;

  constructor(options: PetstoreClientOptions) {
    this.#transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      retries: options.retries ?? DEFAULT_RETRIES,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      fetch: options.fetch ?? fetch,
    });
  }

  /** `listPets`: one page of animals in creation (`id`) order, optionally only those with `status`. */
  listPets(query: ListPetsQuery = {}, options: CallOptions = {}): Promise<Page<Pet>> {
    return this.#page<Pet>('/v1/pets', query, options);
  }

  /** Every animal (optionally only those with `status`), page after page: none skipped or repeated. */
  pets(query: Omit<ListPetsQuery, 'cursor'> = {}, options: CallOptions = {}): AsyncIterable<Pet> {
    return everyItem((cursor) => this.listPets({ ...query, cursor }, options));
  }

  /** `createPet`: adds an animal (`status` defaults to `available`) and returns it with its `id` and `etag`. */
  createPet(pet: NewPet, { idempotencyKey, signal }: CreateOptions = {}): Promise<WithEtag<Pet>> {
    return this.#pet({ method: 'POST', path: '/v1/pets', body: pet, idempotencyKey, signal });
  }

  /**
   * `updatePet`: changes the fields given (a JSON Merge Patch of `name`, `categoryId`, `status`) and returns the
   * animal with its new `etag`. `status` changes only while no order holds the animal (else 409 `conflict`).
   * With `ifMatch`, only the version you read is changed (else 412 `precondition_failed`). Retried only where
   * the service cannot have acted.
   */
  updatePet(petId: number, change: PetChange, { ifMatch, signal }: ConditionalOptions = {}): Promise<WithEtag<Pet>> {
    const headers = { 'content-type': 'application/merge-patch+json', ...ifMatchHeader(ifMatch) };
    return this.#pet({ method: 'PATCH', path: petPath(petId), body: change, headers, signal });
  }

  /**
   * `deletePet`: removes the animal (409 `conflict` while an order holds it; with `ifMatch`, only that version).
   * Retried only where the service cannot have acted: a repeat after a lost answer would be 404.
   */
  async deletePet(petId: number, { ifMatch, signal }: ConditionalOptions = {}): Promise<void> {
    await this.#transport.send<undefined>({
      method: 'DELETE',
      path: petPath(petId),
      headers: ifMatchHeader(ifMatch),
      signal,
    });
  }

  /**
   * `getPet`: one animal by `id`.
   *
   * @deprecated The service removes `GET /v1/pets/{petId}` on 5 December 2030 and answers 410 `gone` from then.
   * Use {@link PetstoreClient.listPets} or {@link PetstoreClient.pets} with the `status` filter instead.
   */
  getPet(petId: number, { signal }: CallOptions = {}): Promise<WithEtag<Pet>> {
    return this.#pet({ method: 'GET', path: petPath(petId), signal });
  }

  /** `listOrders`: one page of orders in `id` order, optionally only those with `status`. */
  listOrders(query: ListOrdersQuery = {}, options: CallOptions = {}): Promise<Page<Order>> {
    return this.#page<Order>('/v1/store/orders', query, options);
  }

  /** Every order (optionally only those with `status`), page after page. */
  orders(query: Omit<ListOrdersQuery, 'cursor'> = {}, options: CallOptions = {}): AsyncIterable<Order> {
    return everyItem((cursor) => this.listOrders({ ...query, cursor }, options));
  }

  /** `placeOrder`: reserves an `available` animal (it becomes `pending`); 404 without it, 409 if not available. */
  placeOrder(order: NewOrder, { idempotencyKey, signal }: CreateOptions = {}): Promise<Order> {
    return this.#body<Order>({ method: 'POST', path: '/v1/store/orders', body: order, idempotencyKey, signal });
  }

  /** `getOrder`: one order by `id`. */
  getOrder(orderId: number, { signal }: CallOptions = {}): Promise<Order> {
    return this.#body<Order>({ method: 'GET', path: `/v1/store/orders/${encodeURIComponent(orderId)}`, signal });
  }

  /**
   * `changeOrderStatus`: `placed → approved → delivered` (the animal becomes `sold`), `placed|approved →
   * cancelled` (it becomes `available`); any other move is 409 `conflict`. Not retried after a lost answer or a
   * 503 (see the README's "Retries"), since the move may have been made.
   */
  changeOrderStatus(orderId: number, change: OrderStatusChange, { signal }: CallOptions = {}): Promise<Order> {
    const path = `/v1/store/orders/${encodeURIComponent(orderId)}`;
    return this.#body<Order>({ method: 'PATCH', path, body: change, signal });
  }

  /**
   * `createWebhookEndpoint`: registers an endpoint for the key's owner (an admin key may name another
   * `owner`); the answer holds its signing `secret`, shown only here (`signature: "hmac"`, the default), or the
   * `publicKey` its `v1a` signatures verify with (`signature: "ed25519"`). Not retried after a lost answer or a
   * 503 (see the README's "Retries"): a repeat would register a second endpoint.
   */
  createWebhookEndpoint(endpoint: NewWebhookEndpoint, { signal }: CallOptions = {}): Promise<CreatedWebhookEndpoint> {
    return this.#body<CreatedWebhookEndpoint>({
      method: 'POST',
      path: '/v1/webhooks',
      body: endpoint,
      unkeyed: true,
      signal,
    });
  }

  /** `listWebhookEndpoints`: one page of the key's owner's endpoints (an admin key's: every owner's), by `id`. */
  listWebhookEndpoints(
    query: ListWebhookEndpointsQuery = {},
    options: CallOptions = {},
  ): Promise<Page<WebhookEndpoint>> {
    return this.#page<WebhookEndpoint>('/v1/webhooks', query, options);
  }

  /** Every endpoint the key sees (optionally one `owner`'s), page after page. */
  webhookEndpoints(
    query: Omit<ListWebhookEndpointsQuery, 'cursor'> = {},
    options: CallOptions = {},
  ): AsyncIterable<WebhookEndpoint> {
    return everyItem((cursor) => this.listWebhookEndpoints({ ...query, cursor }, options));
  }

  /** `getWebhookEndpoint`: one endpoint by `id` (never its secret); 404 when unknown or another owner's. */
  getWebhookEndpoint(webhookId: number, { signal }: CallOptions = {}): Promise<WebhookEndpoint> {
    return this.#body<WebhookEndpoint>({
      method: 'GET',
      path: `/v1/webhooks/${encodeURIComponent(webhookId)}`,
      signal,
    });
  }

  /**
   * `changeWebhookEndpoint`: its `url`, `events`, `description`, `ordering`, `rateLimit` (`null` clears it),
   * `enabled` (enabling sends at once what waited) or `signature` (another kind rotates to a new secret of it; an `hmac` one is in this
   * answer's `secret`, only here). Retried only where the service cannot have acted.
   */
  changeWebhookEndpoint(
    webhookId: number,
    change: WebhookEndpointChange,
    { signal }: CallOptions = {},
  ): Promise<ChangedWebhookEndpoint> {
    const path = `/v1/webhooks/${encodeURIComponent(webhookId)}`;
    return this.#body<ChangedWebhookEndpoint>({ method: 'PATCH', path, body: change, signal });
  }

  /**
   * `deleteWebhookEndpoint`: removes it and its deliveries; nothing more is sent to it. Retried only where
   * the service cannot have acted: a repeat after a lost answer would be 404.
   */
  async deleteWebhookEndpoint(webhookId: number, { signal }: CallOptions = {}): Promise<void> {
    const path = `/v1/webhooks/${encodeURIComponent(webhookId)}`;
    await this.#transport.send<undefined>({ method: 'DELETE', path, signal });
  }

  /**
   * `rotateWebhookSecret`: a new signing secret for the endpoint, shown only in this answer (an Ed25519
   * endpoint's new key pair: its `publicKey`, and `previousPublicKey` for the one replaced). Until
   * `previousSecretExpiresAt` (after `previousSecretExpiresIn` seconds, a day by default; `0` for none) the
   * secret it replaces signs too, so the receiver can switch meanwhile. Not retried after a lost answer or a
   * 503 (see the README's "Retries"): a repeat would rotate again, and the secret the receiver holds would stop signing.
   */
  rotateWebhookSecret(
    webhookId: number,
    rotation: WebhookSecretRotation = {},
    { signal }: CallOptions = {},
  ): Promise<RotatedWebhookSecret> {
    const path = `/v1/webhooks/${encodeURIComponent(webhookId)}/rotate-secret`;
    return this.#body<RotatedWebhookSecret>({ method: 'POST', path, body: rotation, unkeyed: true, signal });
  }

  /**
   * `resendWebhookEvent`: sends the event to the endpoint again (same `webhook-id`, attempts afresh); 404 when
   * the endpoint or event is unknown, the event was removed, or the endpoint does not take its type. Not
   * retried after a lost answer or a 503 (see the README's "Retries"): once the first was sent, a repeat sends it again.
   */
  resendWebhookEvent(webhookId: number, eventId: string, { signal }: CallOptions = {}): Promise<ResendAccepted> {
    const path = `/v1/webhooks/${encodeURIComponent(webhookId)}/resend`;
    return this.#body<ResendAccepted>({ method: 'POST', path, body: { eventId }, unkeyed: true, signal });
  }

  /**
   * `recoverWebhookDeliveries`: sends again every failed delivery to the endpoint of the events recorded in
   * [`since`, `until`) (RFC 3339; `until` now by default; `since` within the service's retention), oldest
   * first. Retried, as a PATCH is, only where the service cannot have acted; repeating it knowingly is safe: a
   * repeat queues nothing twice.
   */
  recoverWebhookDeliveries(
    webhookId: number,
    window: WebhookRecovery,
    { signal }: CallOptions = {},
  ): Promise<RecoveryAccepted> {
    const path = `/v1/webhooks/${encodeURIComponent(webhookId)}/recover`;
    return this.#body<RecoveryAccepted>({ method: 'POST', path, body: window, unkeyed: true, signal });
  }

  /**
   * `sendWebhookTest`: a signed `webhook.test` to the endpoint alone (in its deliveries log, never the feed);
   * 404 when it is unknown. Not retried where the service may have acted: a repeat would send a second test.
   */
  sendWebhookTest(webhookId: number, { signal }: CallOptions = {}): Promise<TestSendAccepted> {
    const path = `/v1/webhooks/${encodeURIComponent(webhookId)}/test`;
    return this.#body<TestSendAccepted>({ method: 'POST', path, unkeyed: true, signal });
  }

  /**
   * `portalLink` (`createPortalLink`): a short-lived link to the service's webhook portal for the key's owner (an admin key
   * may name any `owner`), for one person to open in a browser before `expiresAt`. Not retried after a lost
   * answer: a link is cheap, ask for another.
   */
  portalLink(request: PortalLinkRequest = {}, { signal }: CallOptions = {}): Promise<PortalLink> {
    const path = '/v1/webhooks/portal-links';
    return this.#body<PortalLink>({ method: 'POST', path, body: request, unkeyed: true, signal });
  }

  /**
   * `listAuditLog`: one page of the audit log, newest first: who changed the key's owner's endpoints, links and
   * keys (an admin key's: every owner's, or one `owner`'s), and each changed field before and after.
   */
  listAuditLog(query: ListAuditLogQuery = {}, options: CallOptions = {}): Promise<Page<AuditEntry>> {
    return this.#page<AuditEntry>('/v1/audit-log', query, options);
  }

  /** Every audit log entry the key sees that matches `query`, newest first, page after page. */
  auditLog(query: Omit<ListAuditLogQuery, 'cursor'> = {}, options: CallOptions = {}): AsyncIterable<AuditEntry> {
    return everyItem((cursor) => this.listAuditLog({ ...query, cursor }, options));
  }

  /**
   * `listWebhookDeliveries`: one page of the endpoint's deliveries log, newest attempt first, optionally only
   * the attempts that ended with `status`, or those of one `eventId`; each says its `trigger`.
   */
  listWebhookDeliveries(
    webhookId: number,
    query: ListWebhookDeliveriesQuery = {},
    options: CallOptions = {},
  ): Promise<Page<DeliveryAttempt>> {
    return this.#page<DeliveryAttempt>(`/v1/webhooks/${encodeURIComponent(webhookId)}/deliveries`, query, options);
  }

  /**
   * `listEvents`: one page of the change feed, oldest first. `nextCursor` is always set: the position after
   * this page (the same one after an empty page). Keep it to resume later; one older than the service's
   * retention is refused with 410 `gone`.
   */
  listEvents(query: ListEventsQuery = {}, options: CallOptions = {}): Promise<Page<Event>> {
    return this.#page<Event>('/v1/events', query, options);
  }

  /**
   * `getEvent`: one event by `id` (`evt_12`), exactly as the feed and webhook deliveries show it: what a
   * delivery sent, by its attempt's `eventId`. 404 when it is unknown, no longer kept, or not on your feed
   * (another owner's endpoint event, a test send's).
   */
  getEvent(eventId: string, { signal }: CallOptions = {}): Promise<Event> {
    return this.#body<Event>({ method: 'GET', path: `/v1/events/${encodeURIComponent(eventId)}`, signal });
  }

  /**
   * Every event from `cursor` (or the oldest kept), optionally of one `type`, page after page: none skipped
   * or repeated. With `follow`, waits for new events instead of ending. To resume after a restart, page with
   * listEvents and store its `nextCursor`.
   */
  async *events(
    query: Omit<ListEventsQuery, 'limit'> = {},
    { follow = false, pollIntervalMs = DEFAULT_POLL_INTERVAL_MS, signal }: EventsOptions = {},
  ): AsyncGenerator<Event, void> {
    let cursor = query.cursor;
    for (;;) {
      const page = await this.listEvents({ ...query, cursor, limit: 100 }, { signal });
      yield* page.items;
      cursor = page.nextCursor;
      if (page.items.length < 100) {
        if (!follow) return;
        await sleep(pollIntervalMs, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
        if (signal?.aborted === true) return;
      }
    }
  }

  async #body<T>(call: Call): Promise<T> {
    return (await this.#transport.send<T>(call)).body;
  }

  /** A call whose answer is one pet: the Pet, with its `ETag` as `etag`. */
  async #pet(call: Call): Promise<WithEtag<Pet>> {
    const { body, headers } = await this.#transport.send<Pet>(call);
    return Object.defineProperty(body, 'etag', {
      value: headers.get('etag') ?? '',
      enumerable: false,
    }) as WithEtag<Pet>;
  }

  async #page<T>(
    path: string,
    query: ListPetsQuery | ListOrdersQuery | ListEventsQuery | ListWebhookEndpointsQuery | ListWebhookDeliveriesQuery,
    { signal }: CallOptions,
  ): Promise<Page<T>> {
    const { body, headers } = await this.#transport.send<T[]>({ method: 'GET', path, query, signal });
    return { items: body, nextCursor: nextCursor(headers.get('link')) };
  }
}

const petPath = (petId: number) => `/v1/pets/${encodeURIComponent(petId)}`;

const ifMatchHeader = (ifMatch: string | undefined) => (ifMatch === undefined ? {} : { 'if-match': ifMatch });
