import type { DatabaseConfig } from '../config.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** Opens the configured store and brings its schema up to date. */
export async function openStore(database: DatabaseConfig): Promise<Store> {
  return SqliteStore.open(database.path);
}
