import type Database from 'better-sqlite3';
import type { Once, OnceResult } from '../once-records.js';
import { decideOnce, keptRow, type OnceRow, onceQueries } from '../shared/idempotency-records.js';
import { fromMilliseconds } from '../shared/rows.js';
import { sqliteParam } from '../shared/sql-params.js';

/** Runs `effect` once per idempotency key, inside the caller's transaction (see idempotency-records.ts). */
export type OnceRunner = <T, R>(once: Once<T>, effect: () => R, kept: (result: R) => T | undefined) => OnceResult<R>;

const QUERIES = onceQueries(sqliteParam);

/** The idempotency_keys table on SQLite: synchronous, so it runs inside the caller's db.transaction. */
export class SqliteIdempotencyKeys {
  readonly runOnce: OnceRunner;
  readonly #purge: Database.Statement<[number]>;

  constructor(db: Database.Database) {
    const find = db.prepare<[number, string], OnceRow<number>>(QUERIES.find);
    const remove = db.prepare<[number, string]>(QUERIES.remove);
    const insert = db.prepare<unknown[]>(QUERIES.insert);
    this.#purge = db.prepare(QUERIES.purge);
    this.runOnce = (once, effect, kept) => {
      const decision = decideOnce(find.get(once.owner, once.key), once, fromMilliseconds);
      if (decision.outcome !== 'run') return decision;
      if (decision.replaceExpired) remove.run(once.owner, once.key);
      const result = effect();
      const row = keptRow(once, result, kept);
      if (row !== undefined) insert.run(...row.values, row.expiresAt.getTime());
      return { outcome: 'done', result };
    };
  }

  /** Removes the records that expired before `now`; returns how many. */
  purgeExpired(now: Date): number {
    return this.#purge.run(now.getTime()).changes;
  }
}
