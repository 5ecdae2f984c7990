import type { AuditEntry } from '../schemas/audit-log.js';
import type { AuditEntryRecord } from '../store/audit-records.js';

/** An audit entry as the API shows it: what is unknown (no owner, no request) is left out. */
export function toAuditEntry(record: AuditEntryRecord): AuditEntry {
  const { owner, ...target } = record.target;
  return {
    id: record.id,
    at: record.at.toISOString(),
    actor: record.actor,
    action: record.action,
    target: owner === null ? target : { ...target, owner },
    ...(record.changes === null ? {} : { changes: record.changes }),
    ...(record.requestId === null ? {} : { requestId: record.requestId }),
  };
}
