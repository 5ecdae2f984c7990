import type Database from 'better-sqlite3';
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
import { fromMilliseconds } from '../shared/rows.js';
import { sqliteParam } from '../shared/sql-params.js';
import type { AuditLogStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';

type Row = AuditRow<number>;

/**
 * The audit log on SQLite. A change writes its entry with write(), inside its own write (as the outbox
 * records events), so the entry commits with the change or not at all.
 */
export class SqliteAuditLog implements AuditLogStore {
  readonly #db: Database.Database;
  readonly #writes: GroupCommit;
  readonly #insert: Database.Statement<unknown[]>;
  readonly #purge: Database.Statement<[number, number]>;
  /** The page statements, by which filters they take (auditListStatement), prepared on first use. */
  readonly #pages = new Map<string, Database.Statement<unknown[], Row>>();

  constructor(db: Database.Database, writes: GroupCommit) {
    this.#db = db;
    this.#writes = writes;
    this.#insert = db.prepare(insertAudit(sqliteParam, '?'));
    this.#purge = db.prepare('DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? LIMIT ?)');
  }

  /** Writes the entry in the write that runs this (the caller's transaction). */
  write(entry: NewAuditEntry): void {
    this.#insert.run(...auditValues(entry), Date.now());
  }

  async record(entry: NewAuditEntry): Promise<void> {
    await this.#writes.run(() => this.write(entry));
  }

  async list(query: AuditQuery): Promise<AuditEntryRecord[]> {
    const { name, text, values } = auditListStatement(query, sqliteParam, (since) => since.getTime());
    let page = this.#pages.get(name);
    if (page === undefined) {
      page = this.#db.prepare<unknown[], Row>(text);
      this.#pages.set(name, page);
    }
    return page.all(...values).map((row) => auditFromRow(row, fromMilliseconds));
  }

  async purge(before: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const { changes } = await this.#writes.run(() => this.#purge.run(before.getTime(), AUDIT_PURGE_BATCH));
      removed += changes;
      if (changes < AUDIT_PURGE_BATCH) return removed;
    }
  }
}
