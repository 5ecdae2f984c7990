/** Store states kept at once: requests in flight may hold a token or two older than the newest. */
const MAX_TOKENS = 4;

/**
 * Values read from the store, kept per change token (see Store.changeToken). A value is loaded only after
 * its token was read, so it is at least as new as the token says; any committed write, by this process
 * or another, changes the token, so a request that read its token after a write was acknowledged never
 * gets a value from before it. Concurrent requests for one key under one token share one load (no
 * stampede when a write empties the cache under load); a failed load is not kept. A request holding an
 * older token is served under that token, so requests in flight across a write do not empty each other's
 * entries.
 */
export class VersionedCache<V> {
  readonly #states = new Map<string, Map<string, Promise<V>>>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** The value of `key` under `token`; `load` reads it from the store (after `token` was read). */
  get(token: string, key: string, load: () => Promise<V>): Promise<V> {
    const entries = this.#entriesOf(token);
    const kept = entries.get(key);
    if (kept !== undefined) return kept;
    if (entries.size >= this.#maxEntries) entries.clear();
    const loading = load();
    entries.set(key, loading);
    loading.catch(() => {
      if (entries.get(key) === loading) entries.delete(key);
    });
    return loading;
  }

  #entriesOf(token: string): Map<string, Promise<V>> {
    let entries = this.#states.get(token);
    if (entries === undefined) {
      if (this.#states.size >= MAX_TOKENS) {
        const oldest = this.#states.keys().next().value as string;
        this.#states.delete(oldest);
      }
      entries = new Map();
      this.#states.set(token, entries);
    }
    return entries;
  }
}
