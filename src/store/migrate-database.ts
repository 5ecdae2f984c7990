import type { DatabaseConfig } from '../config/database-url.js';

export interface MigrationReport {
  readonly kind: DatabaseConfig['kind'];
  /** The versions this run applied, oldest first; empty when the schema was up to date. */
  readonly applied: readonly number[];
  /** The schema's version now: the newest this petstore knows. */
  readonly version: number;
}

/** Brings the configured database's schema up to date (as a start does when it may) and says what that took. */
export async function migrateDatabase(database: DatabaseConfig): Promise<MigrationReport> {
  if (database.kind === 'postgres') {
    const [{ migrateOnce }, { POSTGRES_MIGRATIONS }] = await Promise.all([
      import('./postgres/connections.js'),
      import('./postgres/migrations.js'),
    ]);
    return { kind: 'postgres', applied: await migrateOnce(database), version: POSTGRES_MIGRATIONS.length };
  }
  const [{ openMigrated }, { SQLITE_MIGRATIONS }] = await Promise.all([
    import('./sqlite/open-database.js'),
    import('./sqlite/migrations.js'),
  ]);
  const { db, applied } = openMigrated(database.path);
  db.close();
  return { kind: 'sqlite', applied, version: SQLITE_MIGRATIONS.length };
}
