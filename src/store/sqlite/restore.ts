import { randomBytes } from 'node:crypto';
import { accessSync, constants, copyFileSync, existsSync, renameSync, type Stats, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { CLI_AUDIT } from '../../domain/audit.js';
import { nextEventSeqFloor } from '../../domain/event-seq-floor.js';
import { auditValues, insertAudit } from '../shared/audit-rows.js';
import { sqliteParam } from '../shared/sql-params.js';
import { compactUtc } from './backup-files.js';
import { removeDatabaseFiles } from './database-files.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { openDatabase } from './open-database.js';
import { RestoreError } from './restore-error.js';
import { restoreTarget } from './restore-target.js';

/** What a backup file holds, as far as a restore cares. */
export interface BackupFacts {
  /** Its schema version: this build's or older (a start migrates it). */
  readonly version: number;
  /** The last event id handed out when it was made: cursors up to here go on working. */
  readonly lastEventSeq: number;
  readonly pendingDeliveries: number;
}

export interface Restored extends BackupFacts {
  /** The first event id after the restore: ids between lastEventSeq and this were, or may have been, lost. */
  readonly nextEventSeq: number;
  /** Where the database it replaced was kept, if there was one. */
  readonly replaced: string | undefined;
}

/**
 * Checks `file` is a petstore SQLite database this build can open: intact, of a schema version it knows.
 * Reads a copy beside `workDir`'s other files, so that the backup's own directory gets no -wal or -shm.
 */
export function checkBackup(file: string, workDir = tmpdir()): BackupFacts {
  refuseUnreadable(file);
  const copy = join(workDir, `.petstore-check-${randomBytes(4).toString('hex')}.db`);
  try {
    copyFileSync(file, copy);
    return factsOf(copy, file);
  } finally {
    removeDatabaseFiles(copy);
  }
}

/**
 * The backup must be a file this user can read. Said in a sentence otherwise: copying a directory fails
 * with a bare EISDIR naming the copy's temporary path, and copying a FIFO waits for a writer forever.
 */
function refuseUnreadable(file: string): void {
  let stat: Stats;
  try {
    stat = statSync(file);
    if (stat.isFile()) accessSync(file, constants.R_OK);
  } catch (error) {
    throw new RestoreError(unreadable(file, error));
  }
  if (stat.isDirectory()) throw new RestoreError(`${file} is a directory; give the backup file`);
  if (!stat.isFile()) throw new RestoreError(`${file} is not a regular file; give the backup file`);
}

function unreadable(file: string, error: unknown): string {
  switch ((error as { code?: unknown }).code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return `${file}: no such file`;
    case 'EACCES':
    case 'EPERM':
      return `${file} cannot be read: permission denied`;
    default:
      return `${file} cannot be read: ${(error as Error).message}`;
  }
}

/** The facts of the database at `path` (a copy of `file`, which the messages name). */
function factsOf(path: string, file: string): BackupFacts {
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true });
  } catch (error) {
    throw new RestoreError(`${file} is not a SQLite database (${(error as Error).message})`);
  }
  try {
    let integrity: unknown;
    try {
      integrity = db.pragma('integrity_check', { simple: true });
    } catch (error) {
      throw new RestoreError(`${file} is not a SQLite database, or is damaged (${(error as Error).message})`);
    }
    if (integrity !== 'ok') {
      const said = String(integrity).replace(/\s+/g, ' ').trim().slice(0, 200);
      throw new RestoreError(`${file} is damaged: integrity_check says ${said}`);
    }
    const version = schemaVersion(db, file);
    const known = SQLITE_MIGRATIONS.length;
    if (version > known) {
      throw new RestoreError(
        `${file} was made by a newer petstore (schema version ${version}; this one knows up to ${known}): restore it with that release`,
      );
    }
    const lastEventSeq = Number(
      db.prepare("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'events'").pluck().get(),
    );
    // A backup from before webhooks has no deliveries to send.
    const webhooks = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'webhook_deliveries'").get() !== undefined;
    const pendingDeliveries = webhooks
      ? Number(db.prepare("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").pluck().get())
      : 0;
    return { version, lastEventSeq, pendingDeliveries };
  } finally {
    db.close();
  }
}

function schemaVersion(db: Database.Database, file: string): number {
  try {
    return Number(db.prepare('SELECT coalesce(max(version), 0) FROM schema_migrations').pluck().get());
  } catch {
    throw new RestoreError(`${file} is a SQLite database but not a petstore one (no schema_migrations)`);
  }
}

/**
 * Puts the backup `file` in place of the database at `path`, where it really is (its links followed:
 * restore-target.ts), with the service stopped. The backup is copied (it stays where it is), and the copy
 * is made ready before anything is replaced: event ids go on from nextEventSeqFloor (the restored file
 * cannot know how far the lost history went, and a receiver that deduplicates by webhook-id would drop a
 * new event under a used id), the lost range is recorded so a feed cursor from it is 410 (event_gaps), and
 * claims in flight at the backup point are let go, so those deliveries are sent at once. The database it
 * replaces is kept beside it, whole: switching it out of WAL mode, which SQLite allows only to its one
 * connection, both refuses while a service has it open and folds its -wal into it.
 */
export function restoreSqlite(file: string, path: string, now: Date): Restored {
  refuseUnreadable(file);
  const target = restoreTarget(path);
  const ready = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString('hex')}.restoring`);
  try {
    copyFileSync(file, ready);
    const facts = factsOf(ready, file);
    const nextEventSeq = nextEventSeqFloor(facts.lastEventSeq, now);
    prepare(ready, facts.lastEventSeq, nextEventSeq, basename(file));
    const replaced = existsSync(target) ? setAside(target, now) : undefined;
    renameSync(ready, target);
    return { ...facts, nextEventSeq, replaced };
  } finally {
    removeDatabaseFiles(ready);
  }
}

/**
 * Brings the copy to this build's schema (as a start would), then makes it ready (restoreSqlite), recording
 * the restore in its audit log (`database.restored`, by the command line, the backup named by `backup`).
 */
function prepare(file: string, lastEventSeq: number, nextEventSeq: number, backup: string): void {
  const db = openDatabase(file);
  try {
    db.transaction(() => {
      db.prepare('INSERT INTO event_gaps (lost_after, resumed_at) VALUES (?, ?)').run(lastEventSeq, nextEventSeq);
      db.prepare("DELETE FROM sqlite_sequence WHERE name = 'events'").run();
      db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)").run(nextEventSeq - 1);
      db.prepare('UPDATE webhook_deliveries SET claimed_until = NULL WHERE claimed_until IS NOT NULL').run();
      const target = { kind: 'database' as const, id: backup, owner: null };
      const entry = auditValues({ ...CLI_AUDIT, action: 'database.restored', target });
      db.prepare(insertAudit(sqliteParam, '?')).run(...entry, Date.now());
    })();
  } finally {
    db.close();
  }
}

/** Renames the database at `target` to `<target>.replaced-<time>`, after making sure no one has it open. */
function setAside(target: string, now: Date): string {
  const db = new Database(target, { timeout: 0, fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new RestoreError(`${target} is open in a running service: stop it first, then restore`);
    }
    throw error;
  } finally {
    db.close();
  }
  const aside = `${target}.replaced-${compactUtc(now)}`;
  renameSync(target, aside);
  // Out of WAL mode SQLite removed them; should one be left, it is the old file's, never the new one's.
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(`${target}${suffix}`)) renameSync(`${target}${suffix}`, `${aside}${suffix}`);
  }
  return aside;
}
