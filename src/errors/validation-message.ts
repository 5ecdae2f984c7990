import type { ErrorObject } from 'ajv';
import type { FastifySchemaValidationError } from 'fastify';
import { MAX_JSON_INTEGER } from '../schemas/int64.js';
import { PATTERN_MESSAGE } from '../schemas/keywords.js';
import type { ApiError } from './api-error.js';
import { ERRORS } from './catalogue.js';

/** How a message names the field or parameter: `body.name`, `query parameter "limit"`. */
function where(context: string, path: string[]): string {
  if (context === 'body') return ['body', ...path].join('.');
  const name = path[0] ?? '';
  const kind = context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : context;
  return `${kind} "${name}"${path.length > 1 ? `.${path.slice(1).join('.')}` : ''}`;
}

/** The error for a schema violation: it names the field or parameter and the rule it broke. */
export function validationMessage(context: string, error: FastifySchemaValidationError): ApiError {
  const detail = error as ErrorObject;
  const path = detail.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const at = where(context, path);
  const parent = (detail.parentSchema ?? {}) as Record<string, unknown>;
  switch (detail.keyword) {
    case 'required':
      return ERRORS.required.create(where(context, [...path, String(detail.params.missingProperty)]));
    case 'additionalProperties': {
      const field = String(detail.params.additionalProperty);
      if (context === 'querystring') return ERRORS.unknownQueryParameter.create(field);
      if (context === 'body' && path.length === 0 && field === 'id') return ERRORS.idSent.create();
      return ERRORS.unknownField.create(at, field);
    }
    case 'type':
      if (context === 'body' && path.length === 0 && detail.data == null) return ERRORS.bodyRequired.create();
      if (context !== 'body' && Array.isArray(detail.data)) return ERRORS.repeated.create(at);
      if (Array.isArray(parent.enum)) return ERRORS.notOneOf.create(at, parent.enum);
      return ERRORS.wrongType.create(at, String(detail.params.type));
    case 'enum':
      return ERRORS.notOneOf.create(at, detail.params.allowedValues as unknown[]);
    case 'pattern':
      return ERRORS.brokenRule.create(at, String(parent[PATTERN_MESSAGE] ?? `must match ${detail.params.pattern}`));
    case 'minLength':
      return ERRORS.tooShort.create(at, Number(detail.params.limit));
    case 'maxLength':
      return ERRORS.tooLong.create(at, Number(detail.params.limit));
    case 'minItems':
      return ERRORS.tooFewItems.create(at, Number(detail.params.limit));
    case 'uniqueItems':
      return ERRORS.repeatedItem.create(at, JSON.stringify((detail.data as unknown[])[Number(detail.params.i)]));
    case 'minProperties':
      return ERRORS.noField.create(at, Object.keys((parent.properties ?? {}) as object));
    case 'maximum':
      if (parent.format === 'int64' && detail.params.limit === MAX_JSON_INTEGER) {
        return ERRORS.beyondJsonIntegers.create(at, MAX_JSON_INTEGER);
      }
      return ERRORS.brokenRule.create(at, detail.message ?? 'is invalid');
    default:
      return ERRORS.brokenRule.create(at, detail.message ?? 'is invalid');
  }
}
