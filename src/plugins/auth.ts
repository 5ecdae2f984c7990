import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RequestCache } from '../cache/store-cache.js';
import type { Clock } from '../clock.js';
import { grants, hashApiKey, isActive, isWellFormedApiKey, type Scope, sameHash } from '../domain/api-key.js';
import { ApiError } from '../errors/api-error.js';
import { ERRORS } from '../errors/catalogue.js';
import type { ApiKeyWithHash } from '../store/records.js';
import type { Store } from '../store/store.js';
import { StoreUnavailableError } from '../store/store-errors.js';

interface AuthenticatedKey {
  /** The key's id; for a portal session, the key that made its link (which it must not be counted as). */
  readonly id: number;
  readonly name: string;
  /** Whose webhook endpoints it manages (src/api/owner-access.ts). */
  readonly owner: string;
  readonly scopes: readonly Scope[];
  /**
   * A portal session of `owner`, standing in for a key: rate-limited and logged as its owner's portal, never
   * as the key that made its link, so a partner's page cannot spend an operator's key.
   */
  readonly portalSession: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Reachable without a key (health, OpenAPI document). */
    public?: boolean;
    /** The scope a key needs for this route; none means any valid key will do. */
    scope?: Scope;
  }
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
  }
}

/** The scheme name, case-insensitive, alone or before its token. */
const BEARER_SCHEME = /^bearer( |$)/i;
// RFC 6750 b64token after a case-insensitive scheme name.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** How often a key's last-used time is written: once a minute, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;
/** Key lookups kept at most (known and unknown hashes); past that the cache starts over. */
const MAX_CACHED_KEYS = 10_000;

/** Under /portal/v1 a portal session's cookie stands in for a key, and no bearer key is taken. */
const PORTAL_API = /^\/portal\/v1(\/|\?|$)/;
const API = /^\/v1(\/|\?|$)/;

/** By the URL sent, or by the route it reached: `/%70ortal/v1/webhooks` is routed to the portal's API. */
function forPortal(request: FastifyRequest): boolean {
  return PORTAL_API.test(request.url) || PORTAL_API.test(request.routeOptions.url ?? '');
}

/** Whether the route asks for a key (everything but the public endpoints and unknown paths outside the APIs). */
function needsKey(request: FastifyRequest): boolean {
  if (request.routeOptions.config.public === true) return false;
  // Unknown paths outside the API answer 404 without asking for a key; under /v1 the key comes first.
  if (request.is404) return API.test(request.url) || PORTAL_API.test(request.url);
  return true;
}

/** Checks bearer keys against the store, keeping lookups while the store is unchanged. */
class Authenticator {
  readonly #store: Store;
  readonly #clock: Clock;
  /** When each key's last use was last written. */
  readonly #touched = new Map<number, number>();
  /** A revocation or any other write changes the store's state, so a revoked key is refused at once. */
  readonly #lookups: RequestCache<ApiKeyWithHash | null>;
  readonly #log: FastifyBaseLogger;
  /** A last-used write failed and none has worked since: the failure was logged once already. */
  #touchFailing = false;

  constructor(store: Store, clock: Clock, lookups: RequestCache<ApiKeyWithHash | null>, log: FastifyBaseLogger) {
    this.#store = store;
    this.#clock = clock;
    this.#lookups = lookups;
    this.#log = log;
  }

  /**
   * Records the key's use, best effort and off the request path: a read stays a read even when the
   * database cannot write (disk full, another process's lock, a read-only database).
   */
  #touch(id: number, now: Date): void {
    this.#store.apiKeys.touch(id, now).then(
      () => {
        this.#touchFailing = false;
      },
      (error: unknown) => {
        if (this.#touchFailing) return;
        this.#touchFailing = true;
        // A store failure the store already reported (a full disk since the last commit) is not logged again.
        if (error instanceof StoreUnavailableError && !error.shouldReport()) return;
        this.#log.warn({ err: error }, "recording a key's last use failed; requests go on without it");
      },
    );
  }

  /** The request's key, or the 401 to answer (returned, so the caller can count it as a failed attempt). */
  async authenticate(request: FastifyRequest): Promise<AuthenticatedKey | ApiError> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') return ERRORS.keyMissing.create();
    if (!BEARER_SCHEME.test(header)) return ERRORS.keySchemeMissing.create();
    const key = BEARER.exec(header)?.[1];
    if (key === undefined || !isWellFormedApiKey(key)) return ERRORS.keyMalformed.create();
    const hash = hashApiKey(key);
    const record = await this.#lookups.get(
      request,
      hash,
      async () => (await this.#store.apiKeys.findByHash(hash)) ?? null,
    );
    const now = this.#clock();
    if (record === null || !sameHash(record.hash, hash) || !isActive(record, now)) {
      return ERRORS.keyInvalid.create();
    }
    const last = this.#touched.get(record.id) ?? record.lastUsedAt?.getTime() ?? 0;
    if (now.getTime() - last >= TOUCH_INTERVAL_MS) {
      this.#touched.set(record.id, now.getTime());
      this.#touch(record.id, now);
    }
    return { id: record.id, name: record.name, owner: record.owner, scopes: record.scopes, portalSession: false };
  }
}

/** Who a portal session's cookie stands for (src/portal/portal-sessions.ts), or the 401 to answer. */
interface SessionAuthenticator {
  authenticate(request: FastifyRequest): Promise<AuthenticatedKey | ApiError>;
}

/**
 * Bearer API keys on every route that is not public (a portal session's cookie on the portal's), then the
 * route's scope (401 before 403 before 400).
 */
export const auth = fp(
  async (app: FastifyInstance, options: { store: Store; clock: Clock; sessions: SessionAuthenticator }) => {
    const authenticator = new Authenticator(
      options.store,
      options.clock,
      app.storeCache.create(MAX_CACHED_KEYS),
      app.log,
    );
    app.decorateRequest('apiKey', null);
    app.addHook('onRequest', async (request: FastifyRequest, _reply: FastifyReply) => {
      if (!needsKey(request)) return;
      const key = forPortal(request)
        ? await options.sessions.authenticate(request)
        : await authenticator.authenticate(request);
      // A failure is answered by the failed-auth limit: 401, or 429 once this address failed too often.
      if (key instanceof ApiError) throw await app.failedAuthentication(request, key);
      request.apiKey = key;
      const scope = request.routeOptions.config.scope;
      if (scope !== undefined && !grants(key.scopes, scope)) throw ERRORS.scopeMissing.create(scope);
    });
  },
  // The failed-authentication limit answers the requests whose key is missing or invalid.
  { name: 'auth', dependencies: ['store-cache', 'failed-auth-limit'] },
);
