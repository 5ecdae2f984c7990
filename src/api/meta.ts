import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../http/error-codes.js';
import type { Store } from '../store/store.js';

/** Public endpoints for operators and tooling: the OpenAPI document, liveness and readiness. */
export const metaRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { public: true }, schema: { hide: true } }, async () => {
    try {
      await store.ping();
    } catch (error) {
      throw new ApiError('service_unavailable', 'the database is not reachable', {
        headers: { 'retry-after': '5' },
        cause: error,
      });
    }
    return { status: 'ready', store: store.kind };
  });
};
