import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PetstoreError } from './petstore-error.js';
import { isRetryable, type Method, parseRetryAfter, retryDelayMs } from './retry.js';

export interface TransportOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Retries after the first attempt. */
  readonly retries: number;
  /** Per attempt, the response body included. */
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
}

/** One API call; `path` starts with /v1. */
export interface Call {
  readonly method: Method;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>> | undefined;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** POST only; a new one is made when absent. */
  readonly idempotencyKey?: string | undefined;
  /**
   * A POST the service keeps no Idempotency-Key for: none is sent, and it is retried as a PATCH is, only
   * where the service cannot have acted.
   */
  readonly unkeyed?: boolean | undefined;
  /** Sent as they are, after the client's own (a body's `content-type` may be replaced). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface Answer<T> {
  readonly body: T;
  readonly headers: Headers;
}

/** Sends calls to the service: auth, JSON, a timeout per attempt, retries, and every failure as a PetstoreError. */
export class Transport {
  readonly #root: string;
  readonly #apiKey: string;
  readonly #retries: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: TransportOptions) {
    // The client adds /v1 itself; the address OpenAPI's `servers` gives (ending in /v1) is accepted too.
    this.#root = new URL(options.baseUrl).href.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.#apiKey = options.apiKey;
    this.#retries = options.retries;
    this.#timeoutMs = options.timeoutMs;
    this.#fetch = options.fetch;
  }

  /**
   * The call's answer, the body typed as the route's response schema (the client trusts the service and does
   * not validate it). Retries as `isRetryable` allows, `retries` times at most.
   */
  async send<T>(call: Call): Promise<Answer<T>> {
    const url = this.#url(call.path, call.query);
    // Built once, before any attempt: a header value fetch refuses is the caller's mistake (a TypeError), not a
    // network error to retry. A POST's key is the same on every attempt, so the service applies it once.
    const headers = new Headers({ authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' });
    if (call.body !== undefined) headers.set('content-type', 'application/json');
    const keyed = call.method === 'POST' && call.unkeyed !== true;
    if (keyed) headers.set('idempotency-key', structuredString(call.idempotencyKey ?? randomUUID()));
    for (const [name, value] of Object.entries(call.headers ?? {})) headers.set(name, value);
    const retriedAs = keyed || call.method === 'GET' ? call.method : 'PATCH';
    const init: RequestInit = {
      method: call.method,
      headers,
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    };
    for (let retry = 0; ; retry++) {
      const outcome = await this.#attempt<T>(url, init, call.signal);
      if (!(outcome instanceof PetstoreError)) return outcome;
      const delay = retry < this.#retries && isRetryable(retriedAs, outcome) ? retryDelayMs(outcome, retry) : undefined;
      if (delay === undefined) throw outcome;
      await sleep(delay, undefined, call.signal === undefined ? {} : { signal: call.signal }).catch(() => {
        throw aborted(call.signal);
      });
    }
  }

  async #attempt<T>(
    url: string,
    init: RequestInit,
    signal: AbortSignal | undefined,
  ): Promise<Answer<T> | PetstoreError> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let response: Response;
    let text: string;
    try {
      // Called without a receiver: some fetch implementations refuse a `this` other than the global object.
      const fetch = this.#fetch;
      response = await fetch(url, {
        ...init,
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
      text = await response.text();
    } catch (error) {
      if (signal?.aborted === true) return aborted(signal);
      if (timeout.aborted) {
        return new PetstoreError({ code: 'timeout', status: 0, message: `no answer within ${this.#timeoutMs} ms` });
      }
      return new PetstoreError({ code: 'network_error', status: 0, message: describe(error), cause: error });
    }
    const body = parseJson(text);
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    if (!response.ok) {
      return isErrorBody(body)
        ? new PetstoreError({ code: body.code, status: response.status, message: body.message, retryAfter })
        : invalidResponse(response.status, 'an error without the Error body', retryAfter);
    }
    // 204 No Content (a delete): the call's answer is undefined.
    if (response.status === 204) return { body: undefined as T, headers: response.headers };
    if (body === undefined) return invalidResponse(response.status, 'a body that is not JSON', retryAfter);
    return { body: body as T, headers: response.headers };
  }

  #url(path: string, query: Call['query']): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const search = params.toString();
    return `${this.#root}${path}${search === '' ? '' : `?${search}`}`;
  }
}

/** The Idempotency-Key draft's header is a structured-field string: quoted, with `"` and `\` escaped. */
function structuredString(text: string): string {
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The shape of the Error body; the code is not checked against the list, since a newer service may add codes. */
function isErrorBody(value: unknown): value is { code: string; message: string; status: number } {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return typeof body.code === 'string' && typeof body.message === 'string' && typeof body.status === 'number';
}

function invalidResponse(status: number, what: string, retryAfter: number | undefined): PetstoreError {
  return new PetstoreError({
    code: 'invalid_response',
    status,
    message: `HTTP ${status} with ${what}: not an answer of the petstore API`,
    retryAfter,
  });
}

function aborted(signal: AbortSignal | undefined): PetstoreError {
  return new PetstoreError({ code: 'aborted', status: 0, message: 'the call was aborted', cause: signal?.reason });
}

/** fetch says only "fetch failed"; the reason is in its cause. */
function describe(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const reason = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  return `could not reach the service: ${reason}`;
}
