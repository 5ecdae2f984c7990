/**
 * Values read from the store, kept while the store's change token stays the same. Every entry was read
 * after the one token the cache holds was read; a lookup under any other token misses and starts the
 * cache over under that token (tokens are not ordered: a request holding an older one costs a refill,
 * never a wrong answer, since `set` only keeps values read under the token held). Any committed write,
 * by this process or another, changes the token, so nothing older than an acknowledged write is ever
 * returned. No token (a request that was not authenticated): no caching.
 */
export class VersionedCache<V> {
  readonly #entries = new Map<string, V>();
  readonly #maxEntries: number;
  #token: string | undefined;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** The value read under `token`, if kept. */
  get(token: string | undefined, key: string): V | undefined {
    if (token === undefined) return undefined;
    if (token !== this.#token) {
      this.#entries.clear();
      this.#token = token;
      return undefined;
    }
    return this.#entries.get(key);
  }

  /**
   * Keeps a value read after `token` was read (so it is at least as new as the token says). Ignored when
   * the cache moved on since.
   */
  set(token: string | undefined, key: string, value: V): void {
    if (token === undefined || token !== this.#token) return;
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    this.#entries.set(key, value);
  }
}
