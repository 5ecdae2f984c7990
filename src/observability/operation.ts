import type { FastifyRequest } from 'fastify';

/** The request's operationId, for logs and metrics; bounded: unknown paths share one name. */
export function operationOf(request: FastifyRequest): string {
  const schema = request.routeOptions.schema as { operationId?: string } | undefined;
  if (schema?.operationId !== undefined) return schema.operationId;
  return request.is404 ? 'not_found' : (request.routeOptions.url ?? 'unknown');
}
