import type { AuditContext, NewAuditEntry } from '../../domain/audit.js';
import type { ApiKeyRecord, ApiKeyWithHash, NewApiKeyRecord } from '../records.js';
import { keyCreated, keyRevoked } from '../shared/key-audit.js';
import { revokeTarget } from '../shared/revoke-target.js';
import { type ApiKeyRow, asDate, KEY_COLUMNS, keyFromRow, withoutHash } from '../shared/rows.js';
import type { ApiKeyStore } from '../store.js';
import { lockKey } from './advisory-locks.js';
import { recordAudit } from './audit-log.js';
import type { Database } from './postgres-db.js';

type Row = ApiKeyRow<Date>;

const fromRow = (row: Row) => keyFromRow(row, asDate);
const recordOrNone = (row: Row | undefined) => (row === undefined ? undefined : withoutHash(fromRow(row)));

const INSERT_KEY = `INSERT INTO api_keys (name, owner, prefix, hash, scopes, created_at, expires_at)
  SELECT $1, $2, $3, $4, $5, $6, $7`;

function keyValues(key: NewApiKeyRecord): unknown[] {
  return [key.name, key.owner, key.prefix, key.hash, key.scopes.join(','), key.createdAt, key.expiresAt];
}

/**
 * API keys on PostgreSQL; a duplicate active name becomes DuplicateNameError (the key name is passed). Each
 * change is a transaction with its audit entry.
 */
export class PostgresApiKeyStore implements ApiKeyStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async create(key: NewApiKeyRecord, audit: AuditContext): Promise<ApiKeyRecord> {
    return this.#db.transaction(
      async (client) => {
        const insert = { name: 'keys-insert', text: `${INSERT_KEY} RETURNING ${KEY_COLUMNS}`, values: keyValues(key) };
        const created = withoutHash(fromRow((await client.query<Row>(insert)).rows[0] as Row));
        await recordAudit(client, keyCreated(created, audit));
        return created;
      },
      { keyName: key.name },
    );
  }

  async createFirst(key: NewApiKeyRecord, audit: AuditContext): Promise<ApiKeyRecord | undefined> {
    // The lock makes "no key exists yet" and the insert one step across instances.
    return this.#db.transaction(
      async (client) => {
        await client.query(`SELECT pg_advisory_xact_lock(${lockKey('first-key')})`);
        const { rows } = await client.query<Row>(
          `${INSERT_KEY} WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${KEY_COLUMNS}`,
          keyValues(key),
        );
        const created = recordOrNone(rows[0]);
        if (created !== undefined) await recordAudit(client, keyCreated(created, audit));
        return created;
      },
      { keyName: key.name },
    );
  }

  async findByHash(hash: string): Promise<ApiKeyWithHash | undefined> {
    const [row] = await this.#db.rows<Row>('keys-by-hash', `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`, [
      hash,
    ]);
    return row === undefined ? undefined : fromRow(row);
  }

  async findById(id: number): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.#db.rows<Row>('keys-by-id', `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return recordOrNone(row);
  }

  async redeemLink(linkId: string, expiresAt: Date, opened: NewAuditEntry): Promise<boolean> {
    const redeem = `WITH forgotten AS (DELETE FROM portal_links WHERE expires_at < now())
      INSERT INTO portal_links (id, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
    return this.#db.transaction(async (client) => {
      const { rowCount } = await client.query({ name: 'keys-redeem-link', text: redeem, values: [linkId, expiresAt] });
      if (rowCount !== 1) return false;
      await recordAudit(client, opened);
      return true;
    });
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.#db.rows<Row>('keys-list', `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`, []);
    return rows.map((row) => withoutHash(fromRow(row)));
  }

  async revoke(idOrName: string, at: Date, audit: AuditContext): Promise<ApiKeyRecord | undefined> {
    const target = revokeTarget(idOrName);
    if (target === undefined) return undefined;
    const revoke = {
      name: `keys-revoke-${target.column}`,
      text: `UPDATE api_keys SET revoked_at = $1 WHERE ${target.column} = $2 AND revoked_at IS NULL
       RETURNING ${KEY_COLUMNS}`,
      values: [at, target.value],
    };
    return this.#db.transaction(async (client) => {
      const revoked = recordOrNone((await client.query<Row>(revoke)).rows[0]);
      if (revoked !== undefined) await recordAudit(client, keyRevoked(revoked, audit));
      return revoked;
    });
  }

  async touch(id: number, at: Date): Promise<void> {
    await this.#db.rows('keys-touch', 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id]);
  }
}
