import type { FastifyInstance, HTTPMethods, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ERRORS } from '../errors/catalogue.js';
import { sendError } from '../errors/send-error.js';

/**
 * HTTP's own methods (RFC 9110, and PATCH) but CONNECT, which Node answers itself: on a path that exists, any
 * of them the path lacks is 405 with Allow. Extension methods (WebDAV's PROPFIND, …) stay 404 like any path.
 */
const METHODS: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

interface PathMethods {
  methods: Set<string>;
  /** The routes' options, read when the 405 routes are made: hooks that run later may still change them. */
  routes: RouteOptions[];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route added after 'route-table', by path: what method-not-allowed answers for. */
    readonly routeTable: ReadonlyMap<string, PathMethods>;
  }
}

/** Collects every route as it is added. Registered before the routes. */
export const routeTable = fp(
  async (app: FastifyInstance) => {
    const paths = new Map<string, PathMethods>();
    app.decorate('routeTable', paths);
    app.addHook('onRoute', (route: RouteOptions) => {
      const entry = paths.get(route.url) ?? { methods: new Set<string>(), routes: [] };
      for (const method of [route.method].flat()) entry.methods.add(method);
      entry.routes.push(route);
      paths.set(route.url, entry);
    });
  },
  { name: 'route-table' },
);

/**
 * Registered after every route: gives each path a route for the methods it lacks, answering 405 with
 * `Allow` (Fastify alone would answer 404).
 */
export const methodNotAllowed = fp(
  async (app: FastifyInstance) => {
    for (const [url, entry] of [...app.routeTable]) {
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
        handler: (request, reply) => sendError(reply, ERRORS.methodNotAllowed.create(request.method, allow)),
      });
    }
  },
  {
    name: 'method-not-allowed',
    dependencies: [
      'route-table',
      'meta-routes',
      'docs-routes',
      'pet-routes',
      'order-routes',
      'event-routes',
      'webhook-routes',
    ],
  },
);
