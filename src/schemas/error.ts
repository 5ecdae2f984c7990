import { type Static, Type } from 'typebox';
import { ERROR_CODES } from '../http/error-codes.js';

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
  { $id: 'Error', additionalProperties: false, description: 'Every error response carries this body.' },
);

export type ErrorBody = Static<typeof ErrorBody>;
