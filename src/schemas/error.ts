import { type Static, Type } from 'typebox';
import { ERROR_CODES } from './error-codes.js';

/** The Error body's name in `components.schemas`, for responses that refer to it. */
export const ERROR_BODY_ID = 'Error';

export const ErrorBody = Type.Object(
  {
    code: Type.Unsafe<keyof typeof ERROR_CODES>({
      type: 'string',
      enum: Object.keys(ERROR_CODES),
      description: 'Machine-readable error code; see docs/errors.md.',
    }),
    message: Type.String({ description: 'Human-readable description.' }),
    status: Type.Integer({ description: 'The HTTP status code, repeated.' }),
  },
  { $id: ERROR_BODY_ID, additionalProperties: false, description: 'Every error response carries this body.' },
);

export type ErrorBody = Static<typeof ErrorBody>;
