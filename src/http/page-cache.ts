/** A page as sent: the serialised body and its `Link` header, if any. */
export interface CachedPage {
  readonly body: string;
  readonly link: string | undefined;
}

/** Pages kept at most; past that the cache starts over (a page is a few kilobytes). */
const MAX_PAGES = 256;

/**
 * Serialised pages of one list endpoint, valid while the store's change token stays the same: any
 * committed write, by this process or another, empties it before the next read, so no page older than
 * an acknowledged write is ever sent. A store that has no token (PostgreSQL) caches nothing.
 */
export class PageCache {
  readonly #changeToken: () => string | undefined;
  readonly #pages = new Map<string, CachedPage>();
  #token: string | undefined;

  constructor(changeToken: () => string | undefined) {
    this.#changeToken = changeToken;
  }

  /**
   * The store's token now, or undefined when nothing may be cached. Call it in the same synchronous step
   * as the read whose result `set` will keep, so the page and the token name the same state.
   */
  current(): string | undefined {
    const token = this.#changeToken();
    if (token !== this.#token) {
      this.#pages.clear();
      this.#token = token;
    }
    return token;
  }

  get(key: string): CachedPage | undefined {
    return this.#pages.get(key);
  }

  /** Keeps a page read under `token`, unless a newer token has been seen since. */
  set(token: string, key: string, page: CachedPage): void {
    if (token !== this.#token) return;
    if (this.#pages.size >= MAX_PAGES) this.#pages.clear();
    this.#pages.set(key, page);
  }
}
