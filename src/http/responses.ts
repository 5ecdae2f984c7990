import { Type } from 'typebox';
import { ERROR_BODY_ID, type ErrorBody } from '../schemas/error.js';
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

/** What a client sees for each code: shown as the example of each error response in the reference. */
const EXAMPLE_MESSAGE: Partial<Record<ErrorCode, string>> = {
  invalid_request: 'query parameter "limit" must be <= 100',
  unauthorized: 'the API key is invalid, expired or revoked',
  forbidden: 'this API key lacks the "read" or "write" scope this operation needs',
  not_found: 'pet 42 does not exist',
  gone: 'GET /v1/pets/:petId was removed on 2030-12-05; use /v1/pets',
  payload_too_large: 'the request body is larger than 65536 bytes',
  unsupported_media_type: 'the request body must be application/json',
  conflict: 'pet 42 is pending, not available',
  idempotency_mismatch: 'this Idempotency-Key was used with a different request',
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
      // allOf, not a bare $ref: the OpenAPI generator drops keywords beside a $ref, and the example must show.
      Type.Unsafe<ErrorBody>({
        allOf: [{ $ref: ERROR_BODY_ID }],
        description: WHEN[code] ?? code,
        examples: [{ code, message: EXAMPLE_MESSAGE[code] ?? code, status: ERROR_CODES[code] }],
        ...(code === 'unauthorized' ? { headers: { 'WWW-Authenticate': CHALLENGE } } : {}),
      }),
    ]),
  );
}
