import type { FastifyRequest } from 'fastify';
import type { AuditContext } from '../domain/audit.js';

/**
 * Who a request's change is made by, for its audit entry: its key (id, name and owner), or, under
 * /portal/v1, its owner's portal session. The routes pass this small value to the store, never the request.
 */
export function auditContext(request: FastifyRequest): AuditContext {
  const key = request.apiKey;
  if (key === null) throw new Error('an audited change ran on a route without a key');
  const actor = key.portalSession
    ? { kind: 'portal' as const, keyId: key.id, owner: key.owner }
    : { kind: 'key' as const, keyId: key.id, keyName: key.name, owner: key.owner };
  return { actor, requestId: request.id };
}
