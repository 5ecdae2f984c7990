import type { DatabaseConfig } from '../config/database-url.js';
import type { WriteTurns } from './sqlite/write-turns.js';
import type { Store } from './store.js';

/**
 * Opens the configured store and brings its schema up to date; only that store's driver is loaded.
 * `sqliteTurns`: how this process takes its turn to write among others sharing the SQLite file.
 */
export async function openStore(database: DatabaseConfig, sqliteTurns?: () => WriteTurns): Promise<Store> {
  if (database.kind === 'postgres') {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    return PostgresStore.open(database);
  }
  const { SqliteStore } = await import('./sqlite/sqlite-store.js');
  return SqliteStore.open(database.path, sqliteTurns?.());
}
