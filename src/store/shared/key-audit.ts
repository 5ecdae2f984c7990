import { type AuditContext, changedFields, type NewAuditEntry } from '../../domain/audit.js';
import type { ApiKeyRecord } from '../records.js';

/**
 * The audit entries of API keys' changes, for both backends. A key is recorded by what it is called, whose
 * it is, what it may do and until when: never its hash, nor its prefix (a piece of the key itself).
 */
const target = (key: ApiKeyRecord) => ({ kind: 'api_key' as const, id: String(key.id), owner: key.owner });

export function keyCreated(key: ApiKeyRecord, audit: AuditContext): NewAuditEntry {
  const { name, owner, scopes, expiresAt } = key;
  const changes = changedFields({}, { name, owner, scopes, expiresAt });
  return { ...audit, action: 'api_key.created', target: target(key), changes };
}

export function keyRevoked(key: ApiKeyRecord, audit: AuditContext): NewAuditEntry {
  const changes = changedFields({ revokedAt: null }, { revokedAt: key.revokedAt });
  return { ...audit, action: 'api_key.revoked', target: target(key), changes };
}
