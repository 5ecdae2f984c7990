import type { PetstoreError } from './petstore-error.js';

/** The longest `Retry-After` the client waits for; a longer one fails the call at once with that error. */
export const MAX_RETRY_AFTER_SECONDS = 60;
/** Without `Retry-After`: a random wait up to 250 ms · 2^retry, at most 8 s ("full jitter", so clients spread out). */
export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 8_000;

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Whether a failed attempt may be sent again. GET changes nothing, and every POST carries one
 * Idempotency-Key across its attempts, so the service applies it at most once: both retry 429, 503, time-outs
 * and lost connections, and a POST also retries the 409 with `Retry-After` the service answers while an earlier
 * attempt with the same key is still running (the retry then gets that attempt's response).
 * PATCH carries no key and the service remembers none: after a lost response or a 503 the move may have been
 * made, and repeating it would answer 409 for a move that succeeded. So PATCH is retried only where the service
 * cannot have acted: 429 (refused before the handler runs) and a refused connection.
 */
export function isRetryable(method: Method, error: PetstoreError): boolean {
  if (error.status === 429) return true;
  if (method === 'PATCH') return error.code === 'network_error' && connectionRefused(error.cause);
  if (error.status === 503 || error.code === 'network_error' || error.code === 'timeout') return true;
  return method === 'POST' && error.status === 409 && error.retryAfter !== undefined;
}

/** The wait before retry number `retry` (0 for the first), in ms; undefined when the service asked for too long. */
export function retryDelayMs(error: PetstoreError, retry: number): number | undefined {
  if (error.retryAfter === undefined) return Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return error.retryAfter > MAX_RETRY_AFTER_SECONDS ? undefined : error.retryAfter * 1000;
}

/** `Retry-After` in seconds from now: delta-seconds or an HTTP-date (RFC 9110); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // Every HTTP-date form starts with the day's name; Date.parse alone would read "-5" as a year.
  const at = /^[A-Za-z]/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** fetch's TypeError wraps the system error; ECONNREFUSED means the request never reached the service. */
function connectionRefused(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return typeof cause === 'object' && cause !== null && 'code' in cause && cause.code === 'ECONNREFUSED';
}
