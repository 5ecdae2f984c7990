import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { AuditTargetKind } from '../domain/audit.js';
import { Pager } from '../http/pager.js';
import { errorResponses } from '../openapi/error-responses.js';
import { toAuditEntry } from '../representations/audit-log.js';
import { AuditEntry, AuditLogQuery } from '../schemas/audit-log.js';
import { NEXT_LINK_HEADER, PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { ref } from '../schemas/ref.js';
import { ownerActedFor, ownerSeen } from './owner-access.js';
import type { RouteOptions } from './route-options.js';
import { SCOPE, SECURITY } from './webhook-operation.js';
import { instant } from './webhook-redeliveries.js';

/** `kind/id`, which the query's pattern let through. */
function targetOf(text: string | undefined) {
  if (text === undefined) return undefined;
  const slash = text.indexOf('/');
  return { kind: text.slice(0, slash) as AuditTargetKind, id: text.slice(slash + 1) };
}

/**
 * The audit log (docs/decisions/audit-log.md): who changed what, newest first. A key with `webhooks` reads
 * its own owner's entries, an `admin` key every owner's; under /portal/v1 a session reads its owner's.
 */
const routes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, cursors, links }) => {
  const entries = new Pager(cursors.auditLog, links, '/v1/audit-log', app.storeCache);

  app.get(
    '/v1/audit-log',
    {
      config: SCOPE,
      schema: {
        operationId: 'listAuditLog',
        summary: 'List the audit log',
        description:
          'Every configuration change, newest first: webhook endpoints created, changed (each changed field ' +
          'before and after), enabled, disabled (by a key, the portal or the service), rotated and deleted; ' +
          'portal links made and sessions opened; keys created and revoked; restores. Paged with `cursor` ' +
          '(`Link: rel="next"` leads to older entries, with the same filters). A key with `webhooks` sees its ' +
          "own owner's entries; an `admin` key every owner's (`owner` filters). Kept `AUDIT_RETENTION_DAYS`.",
        tags: ['audit'],
        security: SECURITY,
        querystring: AuditLogQuery,
        response: {
          200: Type.Array(ref(AuditEntry), { description: 'A page of entries.', headers: NEXT_LINK_HEADER }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
        },
      },
    },
    async (request, reply) => {
      const { limit = PAGE_LIMIT_DEFAULT, action, target, since, cursor } = request.query;
      // The owner is a filter of the page (its cache key and its cursor), so no page is shown to another owner.
      const owner =
        request.query.owner === undefined ? ownerSeen(request) : ownerActedFor(request, request.query.owner);
      const query = {
        action,
        target: targetOf(target),
        since: since === undefined ? undefined : instant(since, 'querystring.since'),
      };
      const filters = { owner, action, target, since };
      // Newest first: the pager's position is the last (lowest) id shown, and the next page starts below it.
      return entries.send(reply, { limit, filters, cursor }, ({ afterId, ...page }) =>
        store.audit
          .list({ ...page, ...query, owner, beforeId: afterId === 0 ? undefined : afterId })
          .then((records) => records.map(toAuditEntry)),
      );
    },
  );
};

export const auditLogRoutes = fp(routes, {
  name: 'audit-log-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
