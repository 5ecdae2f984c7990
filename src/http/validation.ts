import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { MAX_JSON_INTEGER } from '../schemas/int64.js';
import { PATTERN_MESSAGE } from '../schemas/keywords.js';

type SchemaObject = { $id?: string; type?: string; properties?: Record<string, SchemaObject> };

function newAjv(useDefaults: boolean, shared: readonly AnySchema[]): Ajv {
  const ajv = new Ajv({
    // Bodies are JSON and must already have the right types: no coercion, no silent removal.
    coerceTypes: false,
    removeAdditional: false,
    useDefaults,
    allErrors: false,
    verbose: true,
    // Formats only annotate here: int64 bounds are explicit minimum/maximum; date-time is output only.
    formats: { int64: true, 'date-time': true },
    keywords: [PATTERN_MESSAGE],
  });
  for (const schema of shared) ajv.addSchema(schema);
  return ajv;
}

function compile(ajv: Ajv, schema: SchemaObject): ValidateFunction {
  return (schema.$id !== undefined ? ajv.getSchema(schema.$id) : undefined) ?? ajv.compile(schema);
}

/**
 * Query and path values arrive as text. An integer parameter accepts only a plain decimal integer
 * (no `1e3`, `0x10`, spaces or repeats); anything else is left as it is for the schema to refuse.
 * Digits beyond 2^53 − 1 become a number over the schema's maximum, so they are refused, not rounded.
 */
function integerCoercer(schema: SchemaObject): (data: Record<string, unknown>) => void {
  const names = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
  return (data) => {
    for (const name of names) {
      const value = data[name];
      if (typeof value === 'string' && /^-?\d{1,400}$/.test(value)) data[name] = Number(value);
    }
  };
}

/** Validators for every route: strict JSON bodies, strictly coerced query strings and path parameters. */
export function validatorCompiler(shared: readonly AnySchema[]): FastifySchemaCompiler<SchemaObject> {
  const bodies = newAjv(true, shared);
  const parameters = newAjv(true, shared);
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return compile(bodies, schema);
    const validate = compile(parameters, schema);
    const coerce = integerCoercer(schema);
    const run = (data: Record<string, unknown> | null) => {
      if (data !== null && typeof data === 'object') coerce(data);
      const valid = validate(data);
      run.errors = validate.errors ?? null;
      return valid;
    };
    run.errors = null as ErrorObject[] | null;
    return run;
  };
}

function where(context: string, path: string[]): string {
  if (context === 'body') return ['body', ...path].join('.');
  const name = path[0] ?? '';
  const kind = context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : context;
  return `${kind} "${name}"${path.length > 1 ? `.${path.slice(1).join('.')}` : ''}`;
}

/** One sentence that names the field or parameter and the rule it broke. */
export function validationMessage(context: string, error: FastifySchemaValidationError): string {
  const detail = error as ErrorObject;
  const path = detail.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const parent = (detail.parentSchema ?? {}) as Record<string, unknown>;
  switch (detail.keyword) {
    case 'required':
      return `${where(context, [...path, String(detail.params.missingProperty)])} is required`;
    case 'additionalProperties': {
      const field = String(detail.params.additionalProperty);
      if (context === 'querystring') return `unknown query parameter "${field}"`;
      if (context === 'body' && path.length === 0 && field === 'id') {
        return 'body.id must not be sent: the service assigns it';
      }
      return `${where(context, path)} has unknown field "${field}"`;
    }
    case 'type':
      if (context === 'body' && path.length === 0 && detail.data == null) return 'a JSON object body is required';
      if (context !== 'body' && Array.isArray(detail.data)) return `${where(context, path)} must be given at most once`;
      if (Array.isArray(parent.enum)) return `${where(context, path)} must be one of: ${parent.enum.join(', ')}`;
      return `${where(context, path)} must be ${detail.params.type === 'integer' ? 'an integer' : `of type ${detail.params.type}`}`;
    case 'enum':
      return `${where(context, path)} must be one of: ${(detail.params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return `${where(context, path)} ${String(parent[PATTERN_MESSAGE] ?? `must match ${detail.params.pattern}`)}`;
    case 'minLength':
    case 'maxLength':
      return `${where(context, path)} must have ${detail.keyword === 'minLength' ? 'at least' : 'at most'} ${detail.params.limit} characters`;
    case 'maximum':
      if (parent.format === 'int64' && detail.params.limit === MAX_JSON_INTEGER) {
        return `${where(context, path)} must be <= ${MAX_JSON_INTEGER} (2^53 - 1, the largest integer JSON clients represent exactly)`;
      }
      return `${where(context, path)} ${detail.message}`;
    default:
      return `${where(context, path)} ${detail.message ?? 'is invalid'}`;
  }
}
