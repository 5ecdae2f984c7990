import { resolve } from 'node:path';
import type { DatabaseConfig } from '../config/database-url.js';
import type { MarkedRestored } from './postgres/restored.js';
import type { BackupFacts, Restored } from './sqlite/restore.js';
import { RestoreError } from './sqlite/restore-error.js';

export type { BackupFacts, MarkedRestored, Restored };

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
  return restoreSqlite(resolve(file), target, now);
}

/**
 * After a PostgreSQL database was restored by other means (pg_restore), every instance stopped: brings its
 * schema up to date, then makes it safe to serve (postgres/restored.ts). On SQLite, restore does it.
 */
export async function markDatabaseRestored(database: DatabaseConfig, now: Date): Promise<MarkedRestored> {
  if (database.kind === 'sqlite') {
    throw new RestoreError(
      'restored is for a PostgreSQL database restored with pg_restore; on SQLite, restore does it',
    );
  }
  const [{ default: pg }, { migrateOnce }, { markRestored }, { nextEventSeqFloor }] = await Promise.all([
    import('pg'),
    import('./postgres/connections.js'),
    import('./postgres/restored.js'),
    import('../domain/event-seq-floor.js'),
  ]);
  await migrateOnce(database);
  const client = new pg.Client({ connectionString: database.url, application_name: 'petstore-restored' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await markRestored(client, (last) => nextEventSeqFloor(last, now));
  } finally {
    await client.end().catch(() => undefined);
  }
}
