import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { ERRORS } from '../errors/catalogue.js';
import type { Store } from '../store/store.js';
import { StoreFullError } from '../store/store-errors.js';

/** Public endpoints for operators: liveness and readiness (the OpenAPI document is served with the docs). */
const routes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { public: true }, schema: { hide: true } }, async () => {
    try {
      await store.ping();
    } catch (error) {
      // Not ready while writes cannot commit (SQLite's disk full), though reads still work.
      throw (error instanceof StoreFullError ? ERRORS.storeFull : ERRORS.storeUnreachable).because(error);
    }
    return { status: 'ready', store: store.kind };
  });
};

export const metaRoutes = fp(routes, { name: 'meta-routes', encapsulate: true });
