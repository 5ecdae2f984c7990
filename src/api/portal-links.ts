import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { errorResponses } from '../openapi/error-responses.js';
import { PORTAL_PATH, type PortalSessions } from '../portal/portal-sessions.js';
import { PortalLink, PortalLinkRequest } from '../schemas/portal-link.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import { auditContext } from './audit-context.js';
import { ownerActedFor } from './owner-access.js';
import { SCOPE, SECURITY, TAGS, WITH_BODY } from './webhook-operation.js';

interface PortalLinkOptions {
  readonly sessions: PortalSessions;
  /** PUBLIC_URL: the link's origin; the request's own when absent. */
  readonly publicUrl: string | undefined;
}

/** Portal links: a page where an owner manages its endpoints (docs/portal.md), opened by a short-lived link. */
const routes: FastifyPluginAsyncTypebox<PortalLinkOptions> = async (app, { sessions, publicUrl }) => {
  app.post(
    '/v1/webhooks/portal-links',
    {
      config: { ...SCOPE, optionalBody: true },
      // No body: a link for the key's own owner.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'createPortalLink',
        summary: 'Make a link to the webhook portal',
        description:
          "A link to the service's own page where the owner's endpoints and their deliveries are seen and " +
          'managed, for one person to open within `PORTAL_LINK_TTL` (15 minutes by default). The token is in ' +
          "the URL's fragment, which browsers never send to a server; the page trades it, once, for a session " +
          "cookie that lasts as long as the link and opens nothing but that owner's endpoints. Revoking the " +
          'key that made the link ends its sessions. An admin key may make one for any `owner`.',
        tags: TAGS,
        security: SECURITY,
        querystring: NoQuery,
        body: ref(PortalLinkRequest),
        response: {
          201: ref(PortalLink, { description: 'The link; open it in a browser before `expiresAt`.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', ...WITH_BODY),
        },
      },
    },
    async (request, reply) => {
      const owner = ownerActedFor(request, request.body.owner);
      const { token, expiresAt } = await sessions.mintLink(request.apiKey?.id ?? 0, owner, auditContext(request));
      const origin = publicUrl ?? `${request.protocol}://${request.host}`;
      reply.code(201);
      return { url: `${origin}${PORTAL_PATH}#${token}`, owner, expiresAt: expiresAt.toISOString() };
    },
  );
};

export const portalLinkRoutes = fp(routes, {
  name: 'portal-link-routes',
  dependencies: ['openapi', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
