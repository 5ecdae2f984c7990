import type { ApiKeyRecord, ApiKeyWithHash, NewApiKeyRecord } from '../records.js';
import { revokeTarget } from '../shared/revoke-target.js';
import { type ApiKeyRow, asDate, KEY_COLUMNS, keyFromRow, withoutHash } from '../shared/rows.js';
import type { ApiKeyStore } from '../store.js';
import { lockKey } from './advisory-locks.js';
import type { Database } from './postgres-db.js';

type Row = ApiKeyRow<Date>;

const fromRow = (row: Row) => keyFromRow(row, asDate);
const recordOrNone = (row: Row | undefined) => (row === undefined ? undefined : withoutHash(fromRow(row)));

const INSERT_KEY = `INSERT INTO api_keys (name, owner, prefix, hash, scopes, created_at, expires_at)
  SELECT $1, $2, $3, $4, $5, $6, $7`;

function keyValues(key: NewApiKeyRecord): unknown[] {
  return [key.name, key.owner, key.prefix, key.hash, key.scopes.join(','), key.createdAt, key.expiresAt];
}

/** API keys on PostgreSQL; a duplicate active name becomes DuplicateNameError (the key name is passed). */
export class PostgresApiKeyStore implements ApiKeyStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async create(key: NewApiKeyRecord): Promise<ApiKeyRecord> {
    const [row] = await this.#db.rows<Row>(
      'keys-insert',
      `${INSERT_KEY} RETURNING ${KEY_COLUMNS}`,
      keyValues(key),
      key.name,
    );
    return withoutHash(fromRow(row as Row));
  }

  async createFirst(key: NewApiKeyRecord): Promise<ApiKeyRecord | undefined> {
    // The lock makes "no key exists yet" and the insert one step across instances.
    return this.#db.transaction(
      async (client) => {
        await client.query(`SELECT pg_advisory_xact_lock(${lockKey('first-key')})`);
        const { rows } = await client.query<Row>(
          `${INSERT_KEY} WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${KEY_COLUMNS}`,
          keyValues(key),
        );
        return recordOrNone(rows[0]);
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

  async redeemLink(linkId: string, expiresAt: Date): Promise<boolean> {
    const redeem = `WITH forgotten AS (DELETE FROM portal_links WHERE expires_at < now())
      INSERT INTO portal_links (id, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
    return (await this.#db.count('keys-redeem-link', redeem, [linkId, expiresAt])) === 1;
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.#db.rows<Row>('keys-list', `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`, []);
    return rows.map((row) => withoutHash(fromRow(row)));
  }

  async revoke(idOrName: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const target = revokeTarget(idOrName);
    if (target === undefined) return undefined;
    const [row] = await this.#db.rows<Row>(
      `keys-revoke-${target.column}`,
      `UPDATE api_keys SET revoked_at = $1 WHERE ${target.column} = $2 AND revoked_at IS NULL
       RETURNING ${KEY_COLUMNS}`,
      [at, target.value],
    );
    return recordOrNone(row);
  }

  async touch(id: number, at: Date): Promise<void> {
    await this.#db.rows('keys-touch', 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id]);
  }
}
