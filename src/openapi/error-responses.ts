import { Type } from 'typebox';
import { ERROR_EXAMPLES } from '../errors/catalogue.js';
import { ERROR_BODY_ID, type ErrorBody } from '../schemas/error.js';
import { ERROR_CODE_USES, ERROR_CODES, type ErrorCode } from '../schemas/error-codes.js';

const CHALLENGE = {
  type: 'string',
  description:
    'RFC 6750 challenge: `Bearer realm="petstore"`, with `error="invalid_token"` when a bearer token was sent.',
};
const RETRY_AFTER = { type: 'integer', minimum: 0, description: 'Seconds to wait before trying again.' };

/** The headers an error response carries besides the usual ones. */
const HEADERS: Partial<Record<ErrorCode, Record<string, object>>> = {
  unauthorized: { 'WWW-Authenticate': CHALLENGE },
  rate_limited: { 'Retry-After': RETRY_AFTER },
  service_unavailable: { 'Retry-After': RETRY_AFTER },
};

/**
 * What any documented operation can answer, whatever it does: every one is authenticated, so the checks that
 * run before its route can answer 429 (the key's rate limit, or the address's for failed authentications)
 * and 503 (the database away, or the server stopping).
 */
const EVERY_OPERATION: readonly ErrorCode[] = ['rate_limited', 'service_unavailable'];

/**
 * Response schemas for the error statuses an operation can answer (the codes given, then EVERY_OPERATION's),
 * each with the Error body and an example.
 */
export function errorResponses(...codes: ErrorCode[]) {
  return Object.fromEntries(
    [...new Set([...codes, ...EVERY_OPERATION])].map((code) => {
      const example = ERROR_EXAMPLES[code];
      const headers = HEADERS[code];
      return [
        ERROR_CODES[code],
        // allOf, not a bare $ref: the OpenAPI generator drops keywords beside a $ref, and the example must show.
        Type.Unsafe<ErrorBody>({
          allOf: [{ $ref: ERROR_BODY_ID }],
          description: ERROR_CODE_USES[code],
          examples: [{ code, message: example.message, status: example.statusCode }],
          ...(headers === undefined ? {} : { headers }),
        }),
      ];
    }),
  );
}
