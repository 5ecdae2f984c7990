import type pg from 'pg';
import type { NewAuditEntry } from '../../domain/audit.js';
import type { AuditEntryRecord, AuditQuery } from '../audit-records.js';
import {
  AUDIT_PURGE_BATCH,
  type AuditRow,
  auditFromRow,
  auditListStatement,
  auditValues,
  insertAudit,
} from '../shared/audit-rows.js';
import { asDate } from '../shared/rows.js';
import { postgresParam } from '../shared/sql-params.js';
import type { AuditLogStore } from '../store.js';
import type { Database } from './postgres-db.js';

const INSERT = insertAudit(postgresParam, 'now()');
const PURGE = 'DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 LIMIT $2)';

/** Writes an audit entry in the client's transaction: it commits with the change or not at all. */
export async function recordAudit(client: pg.ClientBase, entry: NewAuditEntry | undefined): Promise<void> {
  if (entry === undefined) return;
  await client.query({ name: 'audit-insert', text: INSERT, values: [...auditValues(entry)] });
}

/** The audit log on PostgreSQL; changes write their entries with recordAudit, in their own transactions. */
export class PostgresAuditLog implements AuditLogStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async record(entry: NewAuditEntry): Promise<void> {
    await this.#db.rows('audit-insert', INSERT, [...auditValues(entry)]);
  }

  async list(query: AuditQuery): Promise<AuditEntryRecord[]> {
    const { name, text, values } = auditListStatement(query, postgresParam, (since) => since);
    const rows = await this.#db.rows<AuditRow<Date>>(name, text, values);
    return rows.map((row) => auditFromRow(row, asDate));
  }

  async purge(before: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const count = await this.#db.count('audit-purge', PURGE, [before, AUDIT_PURGE_BATCH]);
      removed += count;
      if (count < AUDIT_PURGE_BATCH) return removed;
    }
  }
}
