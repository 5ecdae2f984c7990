import type { DatabaseConfig } from '../config.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** Opens the configured store and brings its schema up to date. */
export async function openStore(database: DatabaseConfig): Promise<Store> {
  return database.kind === 'postgres' ? PostgresStore.open(database) : SqliteStore.open(database.path);
}
