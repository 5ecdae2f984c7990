import type Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from './migrations.js';

/**
 * Brings the schema up to date. The whole run holds SQLite's write lock (BEGIN IMMEDIATE), so two
 * processes starting at once apply each migration exactly once: the second waits, then finds nothing to do.
 * Returns the versions it applied.
 */
export function migrateSqlite(db: Database.Database): number[] {
  const run = db.transaction((): number[] => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    const row = db.prepare('SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations').get() as {
      version: number;
    };
    if (row.version > SQLITE_MIGRATIONS.length) {
      throw new Error(
        `the database schema is at version ${row.version}, newer than this petstore knows (${SQLITE_MIGRATIONS.length}); upgrade petstore`,
      );
    }
    const applied: number[] = [];
    const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
    for (let version = row.version + 1; version <= SQLITE_MIGRATIONS.length; version++) {
      db.exec(SQLITE_MIGRATIONS[version - 1] as string);
      record.run(version, Date.now());
      applied.push(version);
    }
    return applied;
  });
  return run.immediate();
}
