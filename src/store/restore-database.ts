import { resolve } from 'node:path';
import type { DatabaseConfig } from '../config/database-url.js';
import { type BackupFacts, type Restored, RestoreError } from './sqlite/restore.js';

export type { BackupFacts, Restored };

/** Refused on PostgreSQL, which restores with its own tools and then `petstore restored`. */
function sqlitePath(database: DatabaseConfig): string {
  if (database.kind === 'postgres') {
    throw new RestoreError(
      'restore puts a SQLite backup in place; on PostgreSQL use pg_restore (README, "Backups and restores")',
    );
  }
  return database.path;
}

/** Checks a backup file as restoreDatabase would, replacing nothing. */
export async function checkBackupFile(database: DatabaseConfig, file: string): Promise<BackupFacts> {
  sqlitePath(database);
  const { checkBackup } = await import('./sqlite/restore.js');
  return checkBackup(resolve(file));
}

/** Puts the SQLite backup `file` in place of the configured database (sqlite/restore.ts), the service stopped. */
export async function restoreDatabase(database: DatabaseConfig, file: string, now: Date): Promise<Restored> {
  const target = sqlitePath(database);
  const { restoreSqlite } = await import('./sqlite/restore.js');
  return restoreSqlite(resolve(file), resolve(target), now);
}
