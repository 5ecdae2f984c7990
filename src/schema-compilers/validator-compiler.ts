import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { PATTERN_MESSAGE } from '../schemas/keywords.js';
import { onFirstUse } from './first-use.js';

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

/** Ajv and what it compiled, by the schema's text: routes build their schema objects as they register. */
interface Compiler {
  readonly ajv: Ajv;
  readonly byText: Map<string, ValidateFunction>;
}

function compile({ ajv, byText }: Compiler, schema: SchemaObject): ValidateFunction {
  if (schema.$id !== undefined) return ajv.getSchema(schema.$id) ?? ajv.compile(schema);
  const text = JSON.stringify(schema);
  const validate = byText.get(text) ?? ajv.compile(schema);
  byText.set(text, validate);
  return validate;
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

/**
 * One Ajv per set of shared schemas in a process, for bodies and parameters alike (the options are the
 * same): each instance compiles Ajv's meta-schema and every shared schema again, so a route registered
 * twice (the portal's copies) or an app built again (tests, a restart in process) reuses its validators.
 */
const compilers = new WeakMap<readonly AnySchema[], Compiler>();

function compilerFor(shared: readonly AnySchema[]): Compiler {
  const compiler = compilers.get(shared) ?? { ajv: newAjv(shared), byText: new Map() };
  compilers.set(shared, compiler);
  return compiler;
}

/**
 * Validators for every route: strict JSON bodies, strictly coerced query strings and path parameters; each
 * compiled on its first use (first-use.ts).
 */
export function validatorCompiler(shared: readonly AnySchema[]): FastifySchemaCompiler<SchemaObject> {
  const compiler = compilerFor(shared);
  return ({ schema, httpPart }) => {
    const validator = onFirstUse(() => compile(compiler, schema));
    const coerce = httpPart === 'body' ? undefined : integerCoercer(schema);
    const run = (data: Record<string, unknown> | null) => {
      const validate = validator();
      if (coerce !== undefined && data !== null && typeof data === 'object') coerce(data);
      const valid = validate(data);
      run.errors = validate.errors ?? null;
      return valid;
    };
    run.errors = null as ErrorObject[] | null;
    return run;
  };
}
