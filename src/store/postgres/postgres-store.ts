import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { PostgresDatabaseConfig } from '../../config.js';
import type { Scope } from '../../domain/api-key.js';
import type { Pet } from '../../schemas/pet.js';
import { KEY_COLUMNS, PET_COLUMNS, type PetRow, petFromRow, withoutHash } from '../rows.js';
import { SharedTokenRead } from '../shared-token-read.js';
import type {
  ApiKeyRecord,
  ApiKeyStore,
  ApiKeyWithHash,
  NewApiKeyRecord,
  NewPetRecord,
  Once,
  OnceResult,
  OrderStore,
  PetPageQuery,
  PetStore,
  PoolStats,
  Store,
} from '../store.js';
import { PetInsertBatch } from './pet-insert-batch.js';
import { Database, lockKey } from './postgres-db.js';
import { migratePostgres } from './postgres-migrate.js';
import { pgOnce } from './postgres-once.js';
import { PostgresOrderStore } from './postgres-order-store.js';

interface ApiKeyRow {
  id: number;
  name: string;
  prefix: string;
  hash: string;
  scopes: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/**
 * The hot queries, exported so a test can check their plans.
 *
 * Inserts take a transaction-level advisory lock before the identity value is drawn and hold it until
 * commit, so pets become visible in id order: a reader never sees id N+1 while N is still in flight,
 * and keyset pages never skip a pet. (Without it, two concurrent inserts can commit out of id order.)
 */
export const PET_QUERIES = {
  insert: `WITH in_id_order AS (SELECT pg_advisory_xact_lock(${lockKey('pet-ids')}))
    INSERT INTO pets (name, category_id, status) SELECT $1::text, $2::bigint, $3::text FROM in_id_order
    RETURNING ${PET_COLUMNS}`,
  get: `SELECT ${PET_COLUMNS} FROM pets WHERE id = $1`,
  page: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
  pageByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
} as const;

/** BIGINT arrives as text; the service's values stay below 2^53, and anything else is refused, not rounded. */
const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === pg.types.builtins.INT8) {
      return (text: string) => {
        const value = Number(text);
        if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is beyond 2^53 - 1`);
        return value;
      };
    }
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

function keyFromRow(row: ApiKeyRow): ApiKeyWithHash {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    hash: row.hash,
    scopes: row.scopes.split(',') as Scope[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

class PostgresPetStore implements PetStore {
  readonly #db: Database;
  readonly #batch: PetInsertBatch;

  constructor(db: Database) {
    this.#db = db;
    this.#batch = new PetInsertBatch(db, (pet) => this.#insertOne(pet));
  }

  create(pet: NewPetRecord): Promise<Pet> {
    return this.#batch.insert(pet);
  }

  async #insertOne(pet: NewPetRecord): Promise<Pet> {
    const [row] = await this.#db.rows<PetRow>('pets-insert', PET_QUERIES.insert, [
      pet.name,
      pet.categoryId,
      pet.status,
    ]);
    return petFromRow(row as PetRow);
  }

  async createOnce(pet: NewPetRecord, once: Once<Pet>): Promise<OnceResult<Pet>> {
    return this.#db.transaction((client) =>
      pgOnce(
        client,
        once,
        async () => {
          const { rows } = await client.query<PetRow>(PET_QUERIES.insert, [pet.name, pet.categoryId, pet.status]);
          return petFromRow(rows[0] as PetRow);
        },
        (created) => created,
      ),
    );
  }

  async get(id: number): Promise<Pet | undefined> {
    const [row] = await this.#db.rows<PetRow>('pets-get', PET_QUERIES.get, [id]);
    return row === undefined ? undefined : petFromRow(row);
  }

  async list(query: PetPageQuery): Promise<Pet[]> {
    const afterId = query.afterId ?? 0;
    const rows =
      query.status === undefined
        ? await this.#db.rows<PetRow>('pets-page', PET_QUERIES.page, [afterId, query.limit])
        : await this.#db.rows<PetRow>('pets-page-status', PET_QUERIES.pageByStatus, [
            query.status,
            afterId,
            query.limit,
          ]);
    return rows.map(petFromRow);
  }
}

const INSERT_KEY = `INSERT INTO api_keys (name, prefix, hash, scopes, created_at, expires_at)
  SELECT $1, $2, $3, $4, $5, $6`;

function keyValues(key: NewApiKeyRecord): unknown[] {
  return [key.name, key.prefix, key.hash, key.scopes.join(','), key.createdAt, key.expiresAt];
}

class PostgresApiKeyStore implements ApiKeyStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async create(key: NewApiKeyRecord): Promise<ApiKeyRecord> {
    const [row] = await this.#db.rows<ApiKeyRow>(
      'keys-insert',
      `${INSERT_KEY} RETURNING ${KEY_COLUMNS}`,
      keyValues(key),
      key.name,
    );
    return withoutHash(keyFromRow(row as ApiKeyRow));
  }

  async createFirst(key: NewApiKeyRecord): Promise<ApiKeyRecord | undefined> {
    // The lock makes "no key exists yet" and the insert one step across instances.
    return this.#db.transaction(async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(${lockKey('first-key')})`);
      const { rows } = await client.query<ApiKeyRow>(
        `${INSERT_KEY} WHERE NOT EXISTS (SELECT 1 FROM api_keys) RETURNING ${KEY_COLUMNS}`,
        keyValues(key),
      );
      return rows[0] === undefined ? undefined : withoutHash(keyFromRow(rows[0]));
    }, key.name);
  }

  async findByHash(hash: string): Promise<ApiKeyWithHash | undefined> {
    const [row] = await this.#db.rows<ApiKeyRow>(
      'keys-by-hash',
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`,
      [hash],
    );
    return row === undefined ? undefined : keyFromRow(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.#db.rows<ApiKeyRow>('keys-list', `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`, []);
    return rows.map((row) => withoutHash(keyFromRow(row)));
  }

  async revoke(idOrName: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const byId = /^\d+$/.test(idOrName);
    if (byId && !Number.isSafeInteger(Number(idOrName))) return undefined;
    const [row] = await this.#db.rows<ApiKeyRow>(
      byId ? 'keys-revoke-id' : 'keys-revoke-name',
      `UPDATE api_keys SET revoked_at = $1 WHERE ${byId ? 'id = $2::bigint' : 'name = $2'} AND revoked_at IS NULL
       RETURNING ${KEY_COLUMNS}`,
      [at, idOrName],
    );
    return row === undefined ? undefined : withoutHash(keyFromRow(row));
  }

  async touch(id: number, at: Date): Promise<void> {
    await this.#db.rows('keys-touch', 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id]);
  }
}

/** How long closing waits for the database to acknowledge. */
const CLOSE_WAIT_MS = 2000;

/**
 * Migrations get a connection of their own, without the request time-outs: waiting for another
 * instance's migration lock, or building an index on a large table, may take longer than any request
 * should. The connection is closed afterwards, so no setting leaks into the pool.
 */
async function migrateOnce(config: PostgresDatabaseConfig): Promise<void> {
  const client = new pg.Client({
    connectionString: config.url,
    connectionTimeoutMillis: config.connectTimeoutMs,
    types: typeParsers,
    application_name: 'petstore-migrate',
  });
  // Without a listener, a connection dropped during the migration would end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SET statement_timeout = 0');
    await migratePostgres(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const CURRENT_SNAPSHOT = 'SELECT pg_current_snapshot()::text AS snapshot';

/**
 * The production store: PostgreSQL through a node-postgres pool, shared by any number of instances.
 * Connect and query time-outs are bounded, so an unreachable database yields StoreUnavailableError
 * (503) quickly, and the pool reconnects by itself when the database returns.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly pets: PetStore;
  readonly orders: OrderStore;
  readonly apiKeys: ApiKeyStore;
  readonly #pool: pg.Pool;
  readonly #db: Database;
  readonly #snapshots: SharedTokenRead;

  private constructor(pool: pg.Pool) {
    this.#pool = pool;
    this.#db = new Database(pool);
    const db = this.#db;
    this.#snapshots = new SharedTokenRead(async () => {
      const [row] = await db.rows<{ snapshot: string }>('current-snapshot', CURRENT_SNAPSHOT, []);
      return (row as { snapshot: string }).snapshot;
    });
    this.pets = new PostgresPetStore(this.#db);
    this.orders = new PostgresOrderStore(this.#db);
    this.apiKeys = new PostgresApiKeyStore(this.#db);
  }

  /** Connects, and brings the schema up to date. */
  static async open(config: PostgresDatabaseConfig): Promise<PostgresStore> {
    const pool = new pg.Pool({
      connectionString: config.url,
      max: config.poolSize,
      connectionTimeoutMillis: config.connectTimeoutMs,
      query_timeout: config.queryTimeoutMs,
      statement_timeout: config.queryTimeoutMs,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      // Idle connections must not keep a stopping process alive (they may wait on a frozen server).
      allowExitOnIdle: true,
      types: typeParsers,
      application_name: 'petstore',
    });
    // An idle connection dropped by the server is removed by the pool; the next query reconnects.
    pool.on('error', () => undefined);
    try {
      await migrateOnce(config);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresStore(pool);
  }

  async secret(name: string): Promise<Buffer> {
    await this.#db.rows(
      'secrets-insert',
      'INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
      [name, randomBytes(32)],
    );
    const [row] = await this.#db.rows<{ value: Buffer }>('secrets-get', 'SELECT value FROM secrets WHERE name = $1', [
      name,
    ]);
    return (row as { value: Buffer }).value;
  }

  async purgeExpiredIdempotencyKeys(now: Date): Promise<number> {
    const { rowCount } = await this.#pool.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
    return rowCount ?? 0;
  }

  async ping(): Promise<void> {
    await this.#db.rows('ping', 'SELECT 1', []);
  }

  /**
   * The snapshot a new statement gets (`pg_current_snapshot()`, PostgreSQL 13+), which names exactly the
   * set of transactions visible to it: the same text, the same data. Every commit or abort by any instance
   * changes it, and a write is visible to new snapshots before its client is answered. One query serves
   * every request that asked meanwhile (SharedTokenRead).
   */
  changeToken(): Promise<string> {
    return this.#snapshots.read();
  }

  poolStats(): PoolStats {
    const pool = this.#pool;
    return { open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max };
  }

  async close(): Promise<void> {
    if (this.#pool.ended) return;
    // pool.end() waits for each server's goodbye, which a frozen server never sends: bound the wait.
    await Promise.race([this.#pool.end(), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }
}
