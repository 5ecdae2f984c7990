import { DuplicateNameError, StoreUnavailableError } from '../store-errors.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
]);

/** Single SQLSTATEs that mean "not now": statement and lock time-outs, read-only, ended idle in a transaction. */
const UNAVAILABLE_STATES = new Set(['57014', '25006', '55P03', '25P03']);

/** node-postgres's own words for a connection that is gone or too slow; they carry no SQLSTATE. */
const DRIVER_MESSAGES = [
  /^timeout exceeded when trying to connect$/,
  /^Connection terminated/,
  /^Query read timeout$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

/**
 * True for failures that say "the database is not there right now" rather than "this request is wrong":
 * network errors; SQLSTATE class 08 (connection) except 08P01 (a protocol violation is a bug), class 53
 * (insufficient resources), 57P0x (shutdown, cannot connect now), 57014 (statement timeout), 25006
 * (writing to a read-only server, as during a fail-over), 55P03 (lock_timeout: a lock held too long,
 * as by a stopped instance) and 25P03 (the session was ended idle in a transaction); and node-postgres's
 * own time-outs and dropped connections, recognised only on errors without a SQLSTATE.
 */
export function isUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) {
      return (/^08/.test(code) && code !== '08P01') || /^(53|57P0)/.test(code) || UNAVAILABLE_STATES.has(code);
    }
  }
  return typeof message === 'string' && DRIVER_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * SQLSTATE 40P01: the server ended this statement's transaction to break a deadlock. Nothing of it was
 * written, and the other side goes on, so a statement that ran on its own may simply run again.
 */
export function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === '40P01';
}

/** Maps a pg error to the store's own errors; anything else passes through unchanged. */
export function translatePgError(error: unknown, context: { keyName?: string } = {}): unknown {
  if (isUnavailable(error)) return new StoreUnavailableError(error);
  if ((error as { code?: unknown }).code === '23505' && context.keyName !== undefined) {
    return new DuplicateNameError(context.keyName);
  }
  return error;
}
