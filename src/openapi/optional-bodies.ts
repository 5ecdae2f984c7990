import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The JSON body may be left out: the route takes none as its defaults (its own preValidation hook), and
     * the document says so. @fastify/swagger marks every request body required.
     */
    optionalBody?: boolean;
  }
}

type Operation = { operationId?: string; requestBody?: object };

/**
 * Collects the operations whose routes have `config.optionalBody`, as they are added; the returned function
 * marks their request bodies not required in the generated document (swagger's `transformObject`).
 */
export function optionalBodies(app: FastifyInstance): <D extends object>(document: D) => D {
  const operations = new Set<string>();
  app.addHook('onRoute', (route) => {
    const operationId = (route.schema as Operation | undefined)?.operationId;
    if (route.config?.optionalBody === true && operationId !== undefined) operations.add(operationId);
  });
  return (document) => {
    const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
    for (const operation of Object.values(paths).flatMap((item) => Object.values(item))) {
      if (operations.has(operation.operationId ?? '') && operation.requestBody !== undefined) {
        operation.requestBody = { ...operation.requestBody, required: false };
      }
    }
    return document;
  };
}
