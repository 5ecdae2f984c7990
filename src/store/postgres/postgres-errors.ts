import { DuplicateNameError, StoreUnavailableError } from '../store.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);

/**
 * True for failures that say "the database is not there right now" rather than "this request is wrong":
 * network errors, SQLSTATE classes 08 (connection), 53 (insufficient resources), 57P0x (shutdown, cannot
 * connect now), 57014 (statement timeout), and node-postgres's own time-outs and dropped connections.
 */
export function isUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || /^(08|53|57P0)/.test(code) || code === '57014') return true;
  }
  return (
    typeof message === 'string' &&
    /timeout|Connection terminated|connection closed|Client has encountered a connection error/i.test(message)
  );
}

/** Maps a pg error to the store's own errors; anything else passes through unchanged. */
export function translatePgError(error: unknown, context: { keyName?: string } = {}): unknown {
  if (isUnavailable(error)) return new StoreUnavailableError(error);
  if ((error as { code?: unknown }).code === '23505' && context.keyName !== undefined) {
    return new DuplicateNameError(context.keyName);
  }
  return error;
}
