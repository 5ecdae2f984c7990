import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Scope } from '../../domain/api-key.js';
import type { Pet } from '../../schemas/pet.js';
import { KEY_COLUMNS, PET_COLUMNS, type PetRow, petFromRow, withoutHash } from '../rows.js';
import { SharedTokenRead } from '../shared-token-read.js';
import {
  type ApiKeyRecord,
  type ApiKeyStore,
  type ApiKeyWithHash,
  DuplicateNameError,
  type NewApiKeyRecord,
  type NewPetRecord,
  type Once,
  type OnceResult,
  type OrderStore,
  type PetPageQuery,
  type PetStore,
  type Store,
} from '../store.js';
import { GroupCommit } from './group-commit.js';
import { migrateSqlite } from './sqlite-migrate.js';
import { type OnceRunner, sqliteOnceRunner } from './sqlite-once.js';
import { SqliteOrderStore } from './sqlite-order-store.js';
import { WalIndexWatch } from './wal-index-watch.js';

interface ApiKeyRow {
  id: number;
  name: string;
  prefix: string;
  hash: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
}

/**
 * The hot queries, exported so a test can check their plans. Two page queries rather than one with
 * `(? IS NULL OR status = ?)`, so each is served by its index and reads only the rows it returns.
 */
export const PET_QUERIES = {
  insert: `INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`,
  get: `SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`,
  page: `SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`,
  pageByStatus: `SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
} as const;

function dateOrNull(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms);
}

function keyFromRow(row: ApiKeyRow): ApiKeyWithHash {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    hash: row.hash,
    scopes: row.scopes.split(',') as Scope[],
    createdAt: new Date(row.created_at),
    expiresAt: dateOrNull(row.expires_at),
    lastUsedAt: dateOrNull(row.last_used_at),
    revokedAt: dateOrNull(row.revoked_at),
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

class SqlitePetStore implements PetStore {
  readonly #insert: Database.Statement<[string, number, string]>;
  readonly #get: Database.Statement<[number]>;
  readonly #page: Database.Statement<[number, number]>;
  readonly #pageByStatus: Database.Statement<[string, number, number]>;

  readonly #createOnce: (pet: NewPetRecord, once: Once<Pet>) => OnceResult<Pet>;
  readonly #writes: GroupCommit;

  constructor(db: Database.Database, runOnce: OnceRunner, writes: GroupCommit) {
    this.#writes = writes;
    this.#insert = db.prepare(PET_QUERIES.insert);
    const createOnce = db.transaction((pet: NewPetRecord, once: Once<Pet>) =>
      runOnce(
        once,
        () => petFromRow(this.#insert.get(pet.name, pet.categoryId, pet.status) as PetRow),
        (created) => created,
      ),
    );
    this.#createOnce = createOnce;
    this.#get = db.prepare(PET_QUERIES.get);
    this.#page = db.prepare(PET_QUERIES.page);
    this.#pageByStatus = db.prepare(PET_QUERIES.pageByStatus);
  }

  create(pet: NewPetRecord): Promise<Pet> {
    return this.#writes.run(() => petFromRow(this.#insert.get(pet.name, pet.categoryId, pet.status) as PetRow));
  }

  createOnce(pet: NewPetRecord, once: Once<Pet>): Promise<OnceResult<Pet>> {
    return this.#writes.run(() => this.#createOnce(pet, once));
  }

  async get(id: number): Promise<Pet | undefined> {
    const row = this.#get.get(id) as PetRow | undefined;
    return row === undefined ? undefined : petFromRow(row);
  }

  async list(query: PetPageQuery): Promise<Pet[]> {
    const afterId = query.afterId ?? 0;
    const rows =
      query.status === undefined
        ? this.#page.all(afterId, query.limit)
        : this.#pageByStatus.all(query.status, afterId, query.limit);
    return (rows as PetRow[]).map(petFromRow);
  }
}

class SqliteApiKeyStore implements ApiKeyStore {
  readonly #db: Database.Database;
  readonly #findByHash: Database.Statement<[string]>;
  readonly #touch: Database.Statement<[number, number]>;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#findByHash = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`);
    this.#touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  }

  #insert(key: NewApiKeyRecord, onlyIfNoKeys: boolean): ApiKeyRecord | undefined {
    const guard = onlyIfNoKeys ? 'WHERE NOT EXISTS (SELECT 1 FROM api_keys)' : '';
    try {
      const row = this.#db
        .prepare(
          `INSERT INTO api_keys (name, prefix, hash, scopes, created_at, expires_at)
           SELECT ?, ?, ?, ?, ?, ? ${guard} RETURNING ${KEY_COLUMNS}`,
        )
        .get(
          key.name,
          key.prefix,
          key.hash,
          key.scopes.join(','),
          key.createdAt.getTime(),
          key.expiresAt?.getTime() ?? null,
        ) as ApiKeyRow | undefined;
      return row === undefined ? undefined : withoutHash(keyFromRow(row));
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateNameError(key.name);
      throw error;
    }
  }

  async create(key: NewApiKeyRecord): Promise<ApiKeyRecord> {
    return this.#insert(key, false) as ApiKeyRecord;
  }

  async createFirst(key: NewApiKeyRecord): Promise<ApiKeyRecord | undefined> {
    return this.#insert(key, true);
  }

  async findByHash(hash: string): Promise<ApiKeyWithHash | undefined> {
    const row = this.#findByHash.get(hash) as ApiKeyRow | undefined;
    return row === undefined ? undefined : keyFromRow(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = this.#db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY id`).all() as ApiKeyRow[];
    return rows.map((row) => withoutHash(keyFromRow(row)));
  }

  async revoke(idOrName: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const byId = /^\d+$/.test(idOrName);
    if (byId && !Number.isSafeInteger(Number(idOrName))) return undefined;
    const row = this.#db
      .prepare(
        `UPDATE api_keys SET revoked_at = ? WHERE ${byId ? 'id' : 'name'} = ? AND revoked_at IS NULL
         RETURNING ${KEY_COLUMNS}`,
      )
      .get(at.getTime(), byId ? Number(idOrName) : idOrName) as ApiKeyRow | undefined;
    return row === undefined ? undefined : withoutHash(keyFromRow(row));
  }

  async touch(id: number, at: Date): Promise<void> {
    this.#touch.run(at.getTime(), id);
  }
}

/** How long opening waits for another process that is switching a new file to WAL at the same moment. */
const WAL_SWITCH_WAIT_MS = 10_000;

/**
 * Switching to WAL needs an exclusive lock and, unlike other statements, reports SQLITE_BUSY at once
 * instead of waiting: two processes opening a brand-new file together would otherwise fail.
 */
function switchToWal(db: Database.Database): void {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so an acknowledged write
 * survives a crash or power loss. better-sqlite3 is synchronous; each call is short and indexed.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly pets: PetStore;
  readonly orders: OrderStore;
  readonly apiKeys: ApiKeyStore;
  readonly #db: Database.Database;
  readonly #commits: WalIndexWatch;
  readonly #tokens: SharedTokenRead;

  private constructor(db: Database.Database, commits: WalIndexWatch) {
    this.#db = db;
    this.#commits = commits;
    this.#tokens = new SharedTokenRead(() => commits.token());
    const runOnce = sqliteOnceRunner(db);
    const writes = new GroupCommit(db);
    this.pets = new SqlitePetStore(db, runOnce, writes);
    this.orders = new SqliteOrderStore(db, runOnce, writes);
    this.apiKeys = new SqliteApiKeyStore(db);
  }

  /** Opens (creating if needed) the database file and brings its schema up to date. */
  static open(path: string): SqliteStore {
    mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path, { timeout: 10_000 });
    try {
      switchToWal(db);
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      migrateSqlite(db);
      // After the first statements, so the -shm file exists and its header is written. SQLite's own name
      // for the file: it resolves symbolic links, and the -shm file sits beside the real file.
      const [main] = db.pragma('database_list') as { name: string; file: string }[];
      return new SqliteStore(db, new WalIndexWatch(main?.file ?? path));
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async secret(name: string): Promise<Buffer> {
    this.#db.prepare('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)').run(name, randomBytes(32));
    const row = this.#db.prepare('SELECT value FROM secrets WHERE name = ?').get(name) as { value: Buffer };
    return row.value;
  }

  async purgeExpiredIdempotencyKeys(now: Date): Promise<number> {
    return this.#db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?').run(now.getTime()).changes;
  }

  /**
   * Changes with every commit by any connection, this one or another process's (see WalIndexWatch). One
   * read serves every request of an event-loop turn (SharedTokenRead).
   */
  changeToken(): Promise<string> {
    return this.#tokens.read();
  }

  poolStats(): undefined {
    return undefined;
  }

  async ping(): Promise<void> {
    this.#db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (!this.#db.open) return;
    this.#db.close();
    this.#commits.close();
  }
}
