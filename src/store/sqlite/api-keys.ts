import type Database from 'better-sqlite3';
import type { AuditContext, NewAuditEntry } from '../../domain/audit.js';
import type { ApiKeyRecord, ApiKeyWithHash, NewApiKeyRecord } from '../records.js';
import { keyCreated, keyRevoked } from '../shared/key-audit.js';
import { revokeTarget } from '../shared/revoke-target.js';
import { type ApiKeyRow, fromMilliseconds, KEY_COLUMNS, keyFromRow, withoutHash } from '../shared/rows.js';
import type { ApiKeyStore } from '../store.js';
import { DuplicateNameError } from '../store-errors.js';
import type { SqliteAuditLog } from './audit-log.js';
import type { GroupCommit } from './group-commit.js';

type Row = ApiKeyRow<number>;

const fromRow = (row: Row) => keyFromRow(row, fromMilliseconds);
const recordOrNone = (row: Row | undefined) => (row === undefined ? undefined : withoutHash(fromRow(row)));

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * API keys on SQLite; the lookup by hash, on every authenticated request, is prepared once. Writes go
 * through the group commit (which never blocks on another process's lock).
 */
export class SqliteApiKeyStore implements ApiKeyStore {
  readonly #db: Database.Database;
  readonly #writes: GroupCommit;
  readonly #audit: SqliteAuditLog;
  readonly #findByHash: Database.Statement<[string], Row>;
  readonly #touch: Database.Statement<[number, number]>;
  readonly #findById: Database.Statement<[number], Row>;
  readonly #forgetLinks: Database.Statement<[number]>;
  readonly #redeem: Database.Statement<[string, number]>;

  constructor(db: Database.Database, writes: GroupCommit, audit: SqliteAuditLog) {
    this.#db = db;
    this.#writes = writes;
    this.#audit = audit;
    this.#findByHash = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`);
    this.#touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
    this.#findById = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`);
    this.#forgetLinks = db.prepare('DELETE FROM portal_links WHERE expires_at < ?');
    this.#redeem = db.prepare('INSERT INTO portal_links (id, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING');
  }

  #insert(key: NewApiKeyRecord, onlyIfNoKeys: boolean, audit: AuditContext): ApiKeyRecord | undefined {
    const guard = onlyIfNoKeys ? 'WHERE NOT EXISTS (SELECT 1 FROM api_keys)' : '';
    try {
      const row = this.#db
        .prepare<unknown[], Row>(
          `INSERT INTO api_keys (name, owner, prefix, hash, scopes, created_at, expires_at)
           SELECT ?, ?, ?, ?, ?, ?, ? ${guard} RETURNING ${KEY_COLUMNS}`,
        )
        .get(
          key.name,
          key.owner,
          key.prefix,
          key.hash,
          key.scopes.join(','),
          key.createdAt.getTime(),
          key.expiresAt?.getTime() ?? null,
        );
      const created = recordOrNone(row);
      if (created !== undefined) this.#audit.write(keyCreated(created, audit));
      return created;
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateNameError(key.name);
      throw error;
    }
  }

  async create(key: NewApiKeyRecord, audit: AuditContext): Promise<ApiKeyRecord> {
    return (await this.#writes.run(() => this.#insert(key, false, audit))) as ApiKeyRecord;
  }

  createFirst(key: NewApiKeyRecord, audit: AuditContext): Promise<ApiKeyRecord | undefined> {
    return this.#writes.run(() => this.#insert(key, true, audit));
  }

  async findByHash(hash: string): Promise<ApiKeyWithHash | undefined> {
    const row = this.#findByHash.get(hash);
    return row === undefined ? undefined : fromRow(row);
  }

  async findById(id: number): Promise<ApiKeyRecord | undefined> {
    return recordOrNone(this.#findById.get(id));
  }

  redeemLink(linkId: string, expiresAt: Date, opened: NewAuditEntry): Promise<boolean> {
    return this.#writes.run(() => {
      this.#forgetLinks.run(Date.now());
      const redeemed = this.#redeem.run(linkId, expiresAt.getTime()).changes === 1;
      if (redeemed) this.#audit.write(opened);
      return redeemed;
    });
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = this.#db.prepare<[], Row>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`).all();
    return rows.map((row) => withoutHash(fromRow(row)));
  }

  async revoke(idOrName: string, at: Date, audit: AuditContext): Promise<ApiKeyRecord | undefined> {
    const target = revokeTarget(idOrName);
    if (target === undefined) return undefined;
    const revoke = this.#db.prepare<[number, number | string], Row>(
      `UPDATE api_keys SET revoked_at = ? WHERE ${target.column} = ? AND revoked_at IS NULL
       RETURNING ${KEY_COLUMNS}`,
    );
    return this.#writes.run(() => {
      const revoked = recordOrNone(revoke.get(at.getTime(), target.value));
      if (revoked !== undefined) this.#audit.write(keyRevoked(revoked, audit));
      return revoked;
    });
  }

  async touch(id: number, at: Date): Promise<void> {
    await this.#writes.run(() => this.#touch.run(at.getTime(), id));
  }
}
