import { ErrorBody } from '../schemas/error.js';
import { ref } from '../schemas/ref.js';
import type { ErrorCode } from './error-codes.js';
import { ERROR_CODES } from './error-codes.js';

const WHEN: Partial<Record<ErrorCode, string>> = {
  invalid_request: 'The request is invalid; the message names the field or parameter and the rule.',
  unauthorized: 'The API key is missing or invalid.',
  forbidden: 'The API key lacks the scope this operation needs.',
  not_found: 'The resource does not exist.',
  gone: 'The operation has been removed.',
  payload_too_large: 'The body is larger than 64 KiB.',
  unsupported_media_type: 'The body is not application/json.',
  conflict: 'The request conflicts with the current state, or a request with this Idempotency-Key is in progress.',
  idempotency_mismatch: 'This Idempotency-Key was used with a different request.',
};

const CHALLENGE = {
  type: 'string',
  description: 'RFC 6750 challenge: `Bearer realm="petstore"`, with `error="invalid_token"` when a key was sent.',
};

/** Response schemas for the error statuses an operation can answer, each with the Error body. */
export function errorResponses(...codes: ErrorCode[]) {
  return Object.fromEntries(
    codes.map((code) => [
      ERROR_CODES[code],
      ref(ErrorBody, {
        description: WHEN[code] ?? code,
        ...(code === 'unauthorized' ? { headers: { 'WWW-Authenticate': CHALLENGE } } : {}),
      }),
    ]),
  );
}
