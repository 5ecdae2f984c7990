import type { AuditAction, AuditActor, AuditChanges, AuditTargetKind, NewAuditEntry } from '../../domain/audit.js';
import type { AuditEntryRecord, AuditQuery } from '../audit-records.js';
import type { ToDate } from './rows.js';
import type { Param } from './sql-params.js';

/** The audit log's rows, for both backends (see rows.ts). The actor and the changes are kept as JSON. */
const AUDIT_COLUMNS = 'id, at, action, actor, target_kind, target_id, owner, changes, request_id';

export interface AuditRow<D> {
  id: number;
  at: D;
  action: AuditAction;
  actor: string;
  target_kind: AuditTargetKind;
  target_id: string;
  owner: string | null;
  changes: string | null;
  request_id: string | null;
}

export function auditFromRow<D>(row: AuditRow<D>, toDate: ToDate<D>): AuditEntryRecord {
  return {
    id: Number(row.id),
    at: toDate(row.at),
    action: row.action,
    actor: JSON.parse(row.actor) as AuditActor,
    target: { kind: row.target_kind, id: row.target_id, owner: row.owner },
    changes: row.changes === null ? null : (JSON.parse(row.changes) as AuditChanges),
    requestId: row.request_id,
  };
}

/** An entry's values in the insert's order: action, actor, target kind, target id, owner, changes, request id. */
export function auditValues(entry: NewAuditEntry) {
  return [
    entry.action,
    JSON.stringify(entry.actor),
    entry.target.kind,
    entry.target.id,
    entry.target.owner,
    entry.changes === undefined ? null : JSON.stringify(entry.changes),
    entry.requestId ?? null,
  ] as const;
}

/** The insert of one entry (auditValues), at the time `at` says in the backend's SQL. */
export const insertAudit = (param: Param, at: string) =>
  `INSERT INTO audit_log (action, actor, target_kind, target_id, owner, changes, request_id, at)
    VALUES (${[1, 2, 3, 4, 5, 6, 7].map(param).join(', ')}, ${at})`;

/**
 * A page statement per combination of filters (its name says which), with its parameters: each is served by
 * the index on (owner, id) or the key, newest first, and reads no more than it returns when unfiltered.
 */
export function auditListStatement(query: AuditQuery, param: Param, at: (since: Date) => unknown) {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const where = (condition: (p: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(condition(param(values.length)));
  };
  where((p) => `id < ${p}`, query.beforeId ?? Number.MAX_SAFE_INTEGER);
  if (query.owner !== undefined) where((p) => `owner = ${p}`, query.owner);
  if (query.action !== undefined) where((p) => `action = ${p}`, query.action);
  if (query.target !== undefined) {
    where((p) => `target_kind = ${p}`, query.target.kind);
    where((p) => `target_id = ${p}`, query.target.id);
  }
  if (query.since !== undefined) where((p) => `at >= ${p}`, at(query.since));
  values.push(query.limit);
  const name = ['owner', 'action', 'target', 'since'].filter((f) => query[f as keyof AuditQuery] !== undefined);
  return {
    name: `audit-list${name.map((f) => `-${f}`).join('')}`,
    text: `SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE ${conditions.join(' AND ')}
      ORDER BY id DESC LIMIT ${param(values.length)}`,
    values,
  };
}

/** Entries removed per write by retention, so a large purge never holds the write lock for long. */
export const AUDIT_PURGE_BATCH = 5000;
