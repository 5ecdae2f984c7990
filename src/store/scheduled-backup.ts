import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BackupSchedule } from '../config/backup-schedule.js';
import { type BackupFile, backupName, newestBackup, pruneBackups } from './sqlite/backup-files.js';
import { takeBackupTurn } from './sqlite/backup-turn.js';
import { type BackupMade, backupSqlite } from './sqlite/online-backup.js';

export type { BackupFile };

/** A scheduled backup this process wrote, and how many old ones it removed to keep BACKUP_KEEP. */
export interface ScheduledBackup {
  readonly made: BackupMade;
  readonly pruned: number;
}

/**
 * One look at the schedule (BACKUP_DIR) of the SQLite database at `path`: if a backup is due and this
 * process takes the turn (backup-turn.ts), writes it into the directory (made if needed) and keeps the
 * newest `keep`. Undefined when it was not this process's turn; a lock held at that moment by a writer
 * is not waited for (the event loop must not be), the next look takes the turn. Not checked with
 * `PRAGMA quick_check` here (online-backup.ts): `petstore backup` is.
 */
export async function runScheduledBackup(
  path: string,
  schedule: BackupSchedule,
  now: Date,
): Promise<ScheduledBackup | undefined> {
  const db = new Database(path, { fileMustExist: true, timeout: 0 });
  try {
    let turn: boolean;
    try {
      turn = takeBackupTurn(db, now, schedule.intervalMs);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return undefined;
      throw error;
    }
    if (!turn) return undefined;
    mkdirSync(schedule.dir, { recursive: true });
    const made = await backupSqlite(db, join(schedule.dir, backupName(now)), false);
    return { made, pruned: pruneBackups(schedule.dir, schedule.keep) };
  } finally {
    db.close();
  }
}

/** The newest scheduled backup in BACKUP_DIR, if any: its age and size are in /metrics. */
export function latestBackup(schedule: BackupSchedule): BackupFile | undefined {
  return newestBackup(schedule.dir);
}
