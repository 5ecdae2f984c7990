// Idempotency as the Store interface (store.ts) sees it: a leaf beside records.ts, which the writes that
// run at most once per key (pets, orders) and both backends name.

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
