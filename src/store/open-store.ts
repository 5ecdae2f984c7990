import type { DatabaseConfig } from '../config/database-url.js';
import type { ChangeTrace } from './change-trace.js';
import type { WriteTurns } from './sqlite/write-turns.js';
import type { Store } from './store.js';

export interface OpenOptions {
  /** How this process takes its turn to write among others sharing the SQLite file. */
  readonly sqliteTurns?: (() => WriteTurns) | undefined;
  /** What a change's events record of the trace it is made in; nothing when absent (tracing off). */
  readonly trace?: ChangeTrace | undefined;
}

/** Opens the configured store and brings its schema up to date; only that store's driver is loaded. */
export async function openStore(database: DatabaseConfig, options: OpenOptions = {}): Promise<Store> {
  if (database.kind === 'postgres') {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    return PostgresStore.open(database, options.trace);
  }
  const { SqliteStore } = await import('./sqlite/sqlite-store.js');
  return SqliteStore.open(database.path, options.sqliteTurns?.(), options.trace);
}
