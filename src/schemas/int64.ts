import { Type } from 'typebox';

/**
 * JSON numbers reach JavaScript as doubles; beyond 2^53 − 1 they would be rounded.
 * Integer fields therefore refuse anything outside the safe range, naming the limit.
 */
export const MAX_JSON_INTEGER = Number.MAX_SAFE_INTEGER;

export function Int64(options: { minimum?: number; description?: string } = {}) {
  return Type.Integer({
    format: 'int64',
    minimum: options.minimum ?? -MAX_JSON_INTEGER,
    maximum: MAX_JSON_INTEGER,
    ...(options.description === undefined ? {} : { description: options.description }),
  });
}
