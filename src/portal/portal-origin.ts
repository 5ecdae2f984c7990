import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { ERRORS } from '../errors/catalogue.js';
import { PORTAL_PATH } from './portal-sessions.js';

/** Methods that change nothing; any other under /portal must come from the portal's own page. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const UNDER_PORTAL = new RegExp(`^${PORTAL_PATH}(/|\\?|$)`);

/** By the URL sent, or by the route it reached: `/%70ortal/session` is routed to `/portal/session`. */
function underPortal(request: FastifyRequest): boolean {
  return UNDER_PORTAL.test(request.url) || UNDER_PORTAL.test(request.routeOptions.url ?? '');
}

/** An origin as browsers write it in `Origin` (lower-case host, no default port), or undefined. */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether the browser says the request comes from `own`: at least one of `Sec-Fetch-Site` and `Origin`
 * says so and neither says otherwise. Neither one (curl, a browser too old to send them) is refused: every
 * browser that runs the page sends `Origin` with its POST, PATCH and DELETE.
 */
function fromOwnOrigin(request: FastifyRequest, own: string | undefined): boolean {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if (site !== undefined && site !== 'same-origin') return false;
  if (origin !== undefined && (own === undefined || origin !== own)) return false;
  return site !== undefined || origin !== undefined;
}

/**
 * Cross-site request forgery under /portal (docs/decisions/portal-request-origin.md): `SameSite=Strict`
 * keeps the cookie off other sites' requests, but a sibling subdomain, or another port of the same host, is
 * the same site. So every request that may change something (the session trade included) must show it comes
 * from the portal's own origin: PUBLIC_URL's, else the one the request reached, as `TRUST_PROXY`'s proxies
 * tell it. Before authentication, so a forged request costs nothing, not even a failed authentication.
 */
export const portalOrigin = fp(
  async (app: FastifyInstance, { publicUrl }: { publicUrl: string | undefined }) => {
    const publicOrigin = publicUrl === undefined ? undefined : originOf(publicUrl);
    // A callback, not async: it runs on every request, and an async hook costs a promise and a microtask.
    app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      if (SAFE_METHODS.has(request.method) || !underPortal(request)) return done();
      const own = publicOrigin ?? originOf(`${request.protocol}://${request.host}`);
      if (fromOwnOrigin(request, own)) return done();
      done(ERRORS.portalOtherOrigin.create(own ?? 'this service'));
    });
  },
  { name: 'portal-origin' },
);
