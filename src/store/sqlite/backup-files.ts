import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** `petstore-20301205T090000Z.db`: the UTC time a scheduled backup began; names sort by it. */
const NAME = /^petstore-\d{8}T\d{6}Z\.db$/;

export interface BackupFile {
  readonly file: string;
  /** When it was written (its modification time). */
  readonly at: Date;
  readonly bytes: number;
}

/** `20301205T090000Z`: a UTC time to the second, in ISO 8601's basic form, as file names carry it. */
export function compactUtc(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** The name of a scheduled backup begun at `at`. */
export function backupName(at: Date): string {
  return `petstore-${compactUtc(at)}.db`;
}

/** The scheduled backups in `dir`, newest first; other files there are not theirs and are left alone. */
function backupsIn(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => NAME.test(name))
    .sort()
    .reverse();
}

/** The newest scheduled backup in `dir`, if any: what /metrics reports. */
export function newestBackup(dir: string): BackupFile | undefined {
  for (const name of backupsIn(dir)) {
    const stat = statSync(join(dir, name), { throwIfNoEntry: false });
    if (stat !== undefined) return { file: join(dir, name), at: stat.mtime, bytes: stat.size };
  }
  return undefined;
}

/** Removes all but the newest `keep` scheduled backups in `dir`; returns how many it removed. */
export function pruneBackups(dir: string, keep: number): number {
  const old = backupsIn(dir).slice(keep);
  for (const name of old) rmSync(join(dir, name), { force: true });
  return old.length;
}
