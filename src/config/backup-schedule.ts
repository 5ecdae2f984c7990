import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import type { DatabaseConfig } from './database-url.js';
import { durationMs } from './retry-schedule.js';
import { parseInteger } from './values.js';

/** Backups the service writes itself: into `dir`, every `intervalMs`, the newest `keep` kept. */
export interface BackupSchedule {
  readonly dir: string;
  readonly intervalMs: number;
  readonly keep: number;
}

const DEFAULT_BACKUP_INTERVAL = '6h';
const DEFAULT_BACKUP_KEEP = 7;
const MAX_BACKUP_INTERVAL_MS = 30 * 86_400_000;

/**
 * BACKUP_DIR, BACKUP_INTERVAL (a duration from 1s to 30d, default 6h) and BACKUP_KEEP (default 7): none
 * without BACKUP_DIR. SQLite only: on PostgreSQL a BACKUP_DIR is refused, not ignored, since an operator
 * who set it believes the data is being backed up.
 */
export function parseBackupSchedule(
  dir: string | undefined,
  interval: string | undefined,
  keep: string | undefined,
  database: DatabaseConfig,
): BackupSchedule | undefined {
  if (dir === undefined) {
    const stray = interval !== undefined ? 'BACKUP_INTERVAL' : keep !== undefined ? 'BACKUP_KEEP' : undefined;
    if (stray !== undefined) throw new ConfigError(`${stray} is set but BACKUP_DIR is not: set where backups go`);
    return undefined;
  }
  if (database.kind === 'postgres') {
    throw new ConfigError(
      'BACKUP_DIR backs up a SQLite database; on PostgreSQL use pg_dump (README, "Backups and restores")',
    );
  }
  const text = interval ?? DEFAULT_BACKUP_INTERVAL;
  const intervalMs = durationMs(text);
  if (!(intervalMs >= 1000 && intervalMs <= MAX_BACKUP_INTERVAL_MS)) {
    throw new ConfigError(
      `BACKUP_INTERVAL must be a duration from 1s to 30d, a number and a unit (ms, s, m, h, d), ` +
        `e.g. ${DEFAULT_BACKUP_INTERVAL}; got "${text}"`,
    );
  }
  return { dir: resolve(dir), intervalMs, keep: parseInteger('BACKUP_KEEP', keep, DEFAULT_BACKUP_KEEP, 1, 10_000) };
}
