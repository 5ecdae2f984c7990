import { BODY_LIMIT_BYTES } from '../domain/limits.js';

/**
 * The error codes of the API: every Error body's `code` is a key here, with its HTTP status and when it is
 * used (shown in the OpenAPI document). docs/errors.md explains each; a test keeps the two in step.
 */
export const ERROR_CODES = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_mismatch: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** When each code is answered: the description of each error response in the OpenAPI document. */
export const ERROR_CODE_USES: Readonly<Record<ErrorCode, string>> = {
  invalid_request: 'The request is invalid; the message names the field or parameter and the rule.',
  unauthorized: 'The API key is missing or invalid.',
  forbidden: 'The API key lacks the scope this operation needs.',
  not_found: 'The resource does not exist.',
  method_not_allowed: 'The path exists, but not with this method; `Allow` lists the methods that do.',
  conflict: 'The request conflicts with the current state, or a request with this Idempotency-Key is in progress.',
  gone: 'The operation has been removed, or the events after a feed cursor are past their retention.',
  precondition_failed:
    'The resource has changed: its `ETag` is none of those `If-Match` names. Read it again, then decide anew.',
  payload_too_large: `The body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`,
  unsupported_media_type: 'The body is not application/json.',
  idempotency_mismatch: 'This Idempotency-Key was used with a different request.',
  rate_limited: 'Too many requests, or event streams open; `Retry-After` says when to try again.',
  internal_error: 'A fault of the service; the message carries a request id to quote.',
  service_unavailable: 'The database is unreachable or the server is stopping; `Retry-After` says when to retry.',
};
