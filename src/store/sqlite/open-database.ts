import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrateSqlite } from './sqlite-migrate.js';

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

/** How long opening (and migrating) waits for another process's write lock: several workers start at once. */
const OPEN_BUSY_TIMEOUT_MS = 10_000;
/**
 * How long a statement then waits for another process's lock, blocking the event loop meanwhile: a few
 * milliseconds, enough for a foreign commit; longer waits are GroupCommit's, asynchronous.
 */
const BUSY_TIMEOUT_MS = 5;
/**
 * The WAL is cut back to this size when it starts over after a checkpoint (journal_size_limit): twice
 * what the automatic checkpoint (every 1000 pages) lets it reach, so only a WAL swollen behind a long
 * reader is cut.
 */
export const WAL_SIZE_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * Opens (creating if needed) the database file in WAL mode with synchronous=FULL, so an acknowledged
 * write survives a crash or power loss, and brings its schema up to date.
 */
export function openDatabase(path: string): Database.Database {
  return openMigrated(path).db;
}

/** openDatabase, also telling which migrations it applied (`petstore migrate` reports them). */
export function openMigrated(path: string): { db: Database.Database; applied: number[] } {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: OPEN_BUSY_TIMEOUT_MS });
  try {
    switchToWal(db);
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    const applied = migrateSqlite(db);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    return { db, applied };
  } catch (error) {
    db.close();
    throw error;
  }
}
