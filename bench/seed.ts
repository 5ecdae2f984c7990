import Database from 'better-sqlite3';
import pg from 'pg';
import type { FreshDatabase } from './databases.js';

export interface Seeded {
  readonly pets: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly seconds: number;
}

/** 0.01 % of pets are sold (at least one), evenly spread; 1 % pending; the rest available. */
function statusRule(pets: number, id: string): string {
  const sold = Math.max(1, Math.round(pets * 0.0001));
  const every = Math.floor(pets / sold);
  return `CASE WHEN ${id} % ${every} = 0 THEN 'sold' WHEN ${id} % 100 = 50 THEN 'pending' ELSE 'available' END`;
}

function seedSqlite(path: string, pets: number): Record<string, number> {
  const db = new Database(path);
  try {
    // One statement, so one transaction; the ids come out 1 to `pets` in order.
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${pets})
       INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, 1 + i % 10, ${statusRule(pets, 'i')} FROM n`,
    ).run();
    const rows = db.prepare('SELECT status, count(*) AS count FROM pets GROUP BY status ORDER BY status').all() as {
      status: string;
      count: number;
    }[];
    return Object.fromEntries(rows.map((row) => [row.status, row.count]));
  } finally {
    db.close();
  }
}

async function seedPostgres(url: string, pets: number): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || i, 1 + i % 10, ${statusRule(pets, 'i')} FROM generate_series(1, ${pets}) AS i ORDER BY i`,
    );
    // A long-lived table has statistics and a visibility map; without them plans and index-only scans
    // would differ from production's, and autovacuum could change them in the middle of a scenario.
    await client.query('VACUUM ANALYZE pets');
    const { rows } = await client.query<{ status: string; count: string }>(
      'SELECT status, count(*) AS count FROM pets GROUP BY status ORDER BY status',
    );
    return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  } finally {
    await client.end();
  }
}

/** Fills the pets table (after `migrate`) straight through the database, much faster than the API. */
export async function seed(database: FreshDatabase, pets: number): Promise<Seeded> {
  const started = performance.now();
  const byStatus =
    database.store === 'sqlite' ? seedSqlite(database.url, pets) : await seedPostgres(database.url, pets);
  return { pets, byStatus, seconds: (performance.now() - started) / 1000 };
}
