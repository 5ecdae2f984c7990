import type Database from 'better-sqlite3';

/**
 * Takes the scheduled backup's turn, if it is due, for the connection's process: the row in
 * backup_schedule says when the last one began, and one write moves it to `now` only if that was at
 * least `intervalMs` ago. Every process on the file asks; SQLite's one writer at a time lets one win.
 */
export function takeBackupTurn(db: Database.Database, now: Date, intervalMs: number): boolean {
  const taken = db
    .prepare(
      `INSERT INTO backup_schedule (id, began_at) VALUES (1, @now)
        ON CONFLICT (id) DO UPDATE SET began_at = @now WHERE began_at <= @now - @interval`,
    )
    .run({ now: now.getTime(), interval: intervalMs });
  return taken.changes === 1;
}
