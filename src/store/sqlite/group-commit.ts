import type Database from 'better-sqlite3';
import { StoreUnavailableError } from '../store.js';

interface Job {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: the writes asked for during one turn of the event loop run together in one IMMEDIATE
 * transaction, so one fsync (synchronous=FULL) makes all of them durable instead of one each. Each write
 * runs in a savepoint of its own (a failing one is rolled back alone and rejects alone), and every promise
 * settles only after COMMIT returned: nothing is acknowledged before it is on disk. A write's own
 * `db.transaction` functions nest as savepoints inside the batch.
 */
export class GroupCommit {
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;
  readonly #savepoint: Database.Statement;
  readonly #release: Database.Statement;
  readonly #rollbackTo: Database.Statement;
  readonly #db: Database.Database;
  #queue: Job[] = [];

  constructor(db: Database.Database) {
    this.#db = db;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT one_write');
    this.#release = db.prepare('RELEASE one_write');
    this.#rollbackTo = db.prepare('ROLLBACK TO one_write');
  }

  /** Runs `work` (synchronous statements) in the next batch; resolves with its result once committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      // setImmediate: after the requests that arrived in this turn have queued their writes.
      if (this.#queue.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const jobs = this.#queue;
    this.#queue = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.#begin.run();
    } catch (error) {
      // Another process held the write lock past the busy timeout: unavailable for now (503, retry), not a bug.
      const busy = String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY');
      for (const job of jobs) job.reject(busy ? new StoreUnavailableError(error) : error);
      return;
    }
    try {
      for (const job of jobs) {
        this.#savepoint.run();
        let outcome: { ok: boolean; value: unknown };
        try {
          outcome = { ok: true, value: job.work() };
        } catch (error) {
          // An I/O, full-disk or memory error makes SQLite roll the whole transaction back: then the
          // batch fails with that error (below), not with "no such savepoint".
          if (!this.#db.inTransaction) throw error;
          this.#rollbackTo.run();
          outcome = { ok: false, value: error };
        }
        this.#release.run();
        outcomes.push(outcome);
      }
      this.#commit.run();
    } catch (error) {
      // The commit (or a savepoint statement) failed: nothing of the batch is on disk.
      if (this.#db.inTransaction) this.#rollback.run();
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, i) => {
      const outcome = outcomes[i] as { ok: boolean; value: unknown };
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    });
  }
}
