import { Type } from 'typebox';
import { ERROR_EXAMPLES } from '../errors/catalogue.js';
import { ERROR_CODE_USES, ERROR_CODES, type ErrorCode } from '../errors/error-codes.js';
import { ERROR_BODY_ID, type ErrorBody } from '../schemas/error.js';

const CHALLENGE = {
  type: 'string',
  description: 'RFC 6750 challenge: `Bearer realm="petstore"`, with `error="invalid_token"` when a key was sent.',
};

/** Response schemas for the error statuses an operation can answer, each with the Error body and an example. */
export function errorResponses(...codes: ErrorCode[]) {
  return Object.fromEntries(
    codes.map((code) => {
      const example = ERROR_EXAMPLES[code];
      return [
        ERROR_CODES[code],
        // allOf, not a bare $ref: the OpenAPI generator drops keywords beside a $ref, and the example must show.
        Type.Unsafe<ErrorBody>({
          allOf: [{ $ref: ERROR_BODY_ID }],
          description: ERROR_CODE_USES[code],
          examples: [{ code, message: example.message, status: example.statusCode }],
          ...(code === 'unauthorized' ? { headers: { 'WWW-Authenticate': CHALLENGE } } : {}),
        }),
      ];
    }),
  );
}
