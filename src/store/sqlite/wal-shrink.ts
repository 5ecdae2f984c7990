import { realpathSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { WAL_SIZE_LIMIT_BYTES } from './open-database.js';

/** How often the WAL's size is looked at (one stat). */
const CHECK_INTERVAL_MS = 5_000;

/**
 * Brings a WAL swollen past WAL_SIZE_LIMIT_BYTES back to nothing once no reader needs it. SQLite cuts it
 * itself only when the WAL starts over, which takes a write: after a long reader (a backup, a report)
 * and then quiet, it would stay swollen for good. A TRUNCATE checkpoint gives up after the busy timeout
 * while a reader still holds the WAL; the next check tries again. Returns what stops the checks.
 */
export function shrinkSwollenWal(db: Database.Database): () => void {
  if (db.memory) return () => undefined;
  // SQLite keeps the WAL beside the file a symbolic link points to.
  const wal = `${realpathSync(db.name)}-wal`;
  const timer = setInterval(() => {
    try {
      const size = statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
      if (size > WAL_SIZE_LIMIT_BYTES) db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Best effort (a full disk fails the checkpoint, a closing store is gone): the next check tries again.
    }
  }, CHECK_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
