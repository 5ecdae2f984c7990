import { resolve } from 'node:path';
import type { DatabaseConfig } from '../config/database-url.js';
import { BackupError, type BackupMade } from './sqlite/online-backup.js';

/** How long opening waits for the service's lock (it holds none for long: a commit). */
const OPEN_BUSY_TIMEOUT_MS = 10_000;

/**
 * Backs the configured SQLite database up to the new file `target` while the service runs
 * (sqlite/online-backup.ts). The file is opened as it is, never migrated: a backup copies what is there.
 * PostgreSQL has its own tools; the error says which.
 */
export async function backupDatabase(
  database: DatabaseConfig,
  target: string,
): Promise<BackupMade & { readonly source: string }> {
  if (database.kind === 'postgres') {
    throw new BackupError(
      'backup copies a SQLite database; on PostgreSQL use pg_dump (README, "Backups and restores")',
    );
  }
  const [{ default: Database }, { backupSqlite }] = await Promise.all([
    import('better-sqlite3'),
    import('./sqlite/online-backup.js'),
  ]);
  let db: InstanceType<typeof Database>;
  try {
    db = new Database(database.path, { fileMustExist: true, timeout: OPEN_BUSY_TIMEOUT_MS });
  } catch (error) {
    throw new BackupError(`cannot open the database ${database.path}: ${(error as Error).message}`);
  }
  try {
    return { source: database.path, ...(await backupSqlite(db, resolve(target), true)) };
  } finally {
    db.close();
  }
}
