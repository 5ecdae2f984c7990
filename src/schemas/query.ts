import { Type } from 'typebox';

/**
 * The query of an operation that takes no parameters: any parameter is refused with 400 naming it, as on the
 * lists (without a schema Fastify would ignore it, and `?stauts=sold` would pass silently).
 */
export const NoQuery = Type.Object({}, { additionalProperties: false });
