import { Type } from 'typebox';

/**
 * The query of an operation that takes no parameters: any parameter is refused with 400 naming it, as on the
 * lists (without a schema Fastify would ignore it, and `?stauts=sold` would pass silently).
 */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * An optional query parameter that filters on one of `values`. They are written inline, not as a `$ref` to
 * their component: @fastify/swagger drops a parameter's description beside a `$ref`, and the one-schema
 * `allOf` that would carry it is what OpenAPI linters flag (Redocly's no-illogical-composition-keywords).
 */
export const filterParameter = <T extends string>(values: readonly T[], description: string) =>
  Type.Optional(Type.Unsafe<T>({ type: 'string', enum: [...values], description }));
