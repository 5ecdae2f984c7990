import type { FastifyInstance, HTTPMethods, RouteOptions } from 'fastify';
import { ApiError } from './error-codes.js';
import { sendError } from './error-reply.js';

const METHODS: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface PathMethods {
  methods: Set<string>;
  /** The routes' options, read when the 405 routes are made: hooks that run later may still change them. */
  routes: RouteOptions[];
}

/**
 * Collects every route as it is added; `answerOtherMethods` then gives each path a route for the
 * methods it lacks, answering 405 with `Allow` (Fastify alone would answer 404).
 */
export function methodNotAllowed(app: FastifyInstance) {
  const paths = new Map<string, PathMethods>();
  app.addHook('onRoute', (route: RouteOptions) => {
    const entry = paths.get(route.url) ?? { methods: new Set<string>(), routes: [] };
    for (const method of [route.method].flat()) entry.methods.add(method);
    entry.routes.push(route);
    paths.set(route.url, entry);
  });

  return {
    answerOtherMethods(): void {
      for (const [url, entry] of [...paths]) {
        // hasRoute too: a prefixed plugin's `/` also becomes `<prefix>/`, announced to onRoute for HEAD only.
        const present = (method: HTTPMethods) => entry.methods.has(method) || app.hasRoute({ url, method });
        const missing = METHODS.filter((method) => !present(method));
        if (missing.length === 0) continue;
        const allow = METHODS.filter(present).join(', ');
        app.route({
          method: missing,
          url,
          // Public when the path's own routes are (a plugin's onRoute hook may have made them so after ours ran).
          config: { public: entry.routes.some((route) => route.config?.public === true) },
          schema: { hide: true },
          handler: (request, reply) => {
            reply.header('allow', allow);
            return sendError(
              reply,
              new ApiError('method_not_allowed', `${request.method} is not allowed here; allowed: ${allow}`),
            );
          },
        });
      }
    },
  };
}
