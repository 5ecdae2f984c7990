import { type Static, type TSchema, Type } from 'typebox';

/**
 * A `$ref` to a schema registered with `app.addSchema`, typed as the schema itself,
 * so the OpenAPI document names it once in `components.schemas`.
 */
export function ref<T extends TSchema>(schema: T, annotations: Record<string, unknown> = {}) {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new TypeError('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>({ $ref: id, ...annotations });
}
