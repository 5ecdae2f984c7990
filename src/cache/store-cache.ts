import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Store } from '../store/store.js';
import { VersionedCache } from './versioned-cache.js';

declare module 'fastify' {
  interface FastifyInstance {
    readonly storeCache: StoreCache;
  }
  interface FastifyRequest {
    /** Owned by StoreCache: the store's change token as this request sees it, read on first use. */
    storeToken: Promise<string> | null;
    /** Owned by StoreCache: storeToken once it has resolved, so later cache reads need no promise. */
    storeTokenValue: string | null;
  }
}

/** A cache of store reads whose entries are valid for every request that sees the store in the same state. */
export interface RequestCache<V> {
  /** The value of `key` for this request: kept, or loaded by `load` (after the request's token was read). */
  get(request: FastifyRequest, key: string, load: () => Promise<V>): Promise<V>;
}

/**
 * Caches of what the store returned, valid while it is unchanged (see Store.changeToken and VersionedCache).
 * A request reads the store's token once, the first time any cache asks for it (authentication, then the
 * page it lists): every cache answers that request with the store as of then, or newer.
 */
export class StoreCache {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  token(request: FastifyRequest): Promise<string> {
    request.storeToken ??= this.#store.changeToken().then((token) => {
      request.storeTokenValue = token;
      return token;
    });
    return request.storeToken;
  }

  create<V>(maxEntries: number): RequestCache<V> {
    const cache = new VersionedCache<V>(maxEntries);
    return {
      // Once the token is known (after authentication, for every page) the read costs no extra promise.
      get: (request, key, load) => {
        const known = request.storeTokenValue;
        if (known !== null) return cache.get(known, key, load);
        return this.token(request).then((token) => cache.get(token, key, load));
      },
    };
  }
}

/** One StoreCache per app, for the plugins and routes that keep store reads (auth's key lookups, pages). */
export const storeCache = fp(
  async (app: FastifyInstance, { store }: { store: Store }) => {
    app.decorate('storeCache', new StoreCache(store));
    app.decorateRequest('storeToken', null);
    app.decorateRequest('storeTokenValue', null);
  },
  { name: 'store-cache' },
);
