import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { PATTERN_MESSAGE } from '../schemas/keywords.js';

type SchemaObject = { $id?: string; type?: string; properties?: Record<string, SchemaObject> };

function newAjv(shared: readonly AnySchema[]): Ajv {
  const ajv = new Ajv({
    // Bodies are JSON and must already have the right types: no coercion, no silent removal.
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
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
  // One instance for bodies and parameters (the options are the same): each instance compiles Ajv's
  // meta-schema and every shared schema again at start-up.
  const ajv = newAjv(shared);
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return compile(ajv, schema);
    const validate = compile(ajv, schema);
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
