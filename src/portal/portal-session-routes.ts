import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { ApiError } from '../errors/api-error.js';
import { PORTAL_PATH, type PortalSessions } from './portal-sessions.js';

const SESSION_PATH = `${PORTAL_PATH}/session`;
const Session = Type.Object({
  owner: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
});
const Trade = Type.Object({ token: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });

/**
 * The page's two calls about its session: trade a link's token (sent in a POST body, never in a URL) for the
 * session cookie, and ask whether the cookie still opens one. Outside /v1 and the OpenAPI document: the
 * page's own, not the API's. A refused token counts as a failed authentication of its address.
 */
const routes: FastifyPluginAsyncTypebox<{ sessions: PortalSessions }> = async (app, { sessions }) => {
  app.post(
    SESSION_PATH,
    { config: { public: true }, schema: { hide: true, body: Trade, response: { 200: Session } } },
    async (request, reply) => {
      const traded = await sessions.trade(request.body.token, request.id);
      if (traded instanceof ApiError) throw await app.failedAuthentication(request, traded);
      reply.header('set-cookie', traded.setCookie);
      return { owner: traded.grant.owner, expiresAt: traded.grant.expiresAt.toISOString() };
    },
  );

  app.get(
    SESSION_PATH,
    { config: { public: true }, schema: { hide: true, response: { 200: Session } } },
    async (request) => {
      const session = await sessions.session(request);
      if (session instanceof ApiError) throw session;
      return { owner: session.owner, expiresAt: session.expiresAt.toISOString() };
    },
  );
};

export const portalSessionRoutes = fp(routes, {
  name: 'portal-session-routes',
  dependencies: ['failed-auth-limit'],
  encapsulate: true,
});
