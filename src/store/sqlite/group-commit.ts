import { AsyncLocalStorage } from 'node:async_hooks';
import type Database from 'better-sqlite3';
import { WriteTrouble } from './write-trouble.js';
import type { WriteTurns } from './write-turns.js';

/** How long a write waits for another process's write lock before it answers 503 (the old busy timeout). */
const LOCK_WAIT_MS = 10_000;
/** The longest pause between two tries for the lock: short, since a foreign commit takes milliseconds. */
const MAX_RETRY_DELAY_MS = 32;

/**
 * `durable: false`: the write may be lost to a power cut (not to a crash of the process) once committed,
 * since what it records is redone after such a loss anyway. A batch of only such writes commits without an
 * fsync; one durable write in the batch makes the commit, and every write before it, durable.
 */
export interface WriteOptions {
  readonly durable?: boolean;
}

interface Job {
  readonly work: () => unknown;
  readonly durable: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** When the job stops waiting for the write lock (Date.now() milliseconds). */
  readonly deadline: number;
}

/**
 * Group commit: the writes asked for during one turn of the event loop run together in one IMMEDIATE
 * transaction, so one fsync (synchronous=FULL) makes all of them durable instead of one each (a batch of
 * writes that need not be durable commits without it: WriteOptions). Each write
 * runs in a savepoint of its own (a failing one is rolled back alone and rejects alone), and every promise
 * settles only after COMMIT returned: nothing is acknowledged before it is on disk. A write's own
 * `db.transaction` functions nest as savepoints inside the batch.
 *
 * When another process holds the write lock, BEGIN fails after the connection's short busy timeout and is
 * tried again later, so the event loop never waits on a foreign lock: reads and /healthz go on, and the
 * writes that arrive meanwhile join the batch. A write still waiting after `lockWaitMs` answers 503.
 * Processes that share the file and take turns (WriteTurns, under `serve --workers N`) ask for their turn
 * before each batch and give it back after its commit, so they wait for each other without polling.
 */
export class GroupCommit {
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;
  readonly #savepoint: Database.Statement;
  readonly #release: Database.Statement;
  readonly #rollbackTo: Database.Statement;
  readonly #db: Database.Database;
  readonly #lockWaitMs: number;
  readonly #turns: WriteTurns | undefined;
  readonly #keepContext: boolean;
  /** This process's turn to write: asked for (`waiting`) or held (`held`). */
  #turn: 'none' | 'waiting' | 'held' = 'none';
  /** Full disk, lock held too long: what failed writes mean, and whether the disk was full last time. */
  readonly trouble: WriteTrouble;
  #queue: Job[] = [];
  /** A flush is due (next turn, or after a failed try for the lock). */
  #scheduled = false;
  /** The flush at the latest for writes queued by later() while no other was due. */
  #deferred: NodeJS.Timeout | undefined;
  #tries = 0;

  /**
   * `keepContext`: each write runs in the async context it was asked for in (a batch runs in the first one's
   * otherwise), so that what it reads from there, the trace its events record, is its own. Off unless traced.
   */
  constructor(
    db: Database.Database,
    options: { lockWaitMs?: number; turns?: WriteTurns | undefined; keepContext?: boolean } = {},
  ) {
    this.#db = db;
    this.#lockWaitMs = options.lockWaitMs ?? LOCK_WAIT_MS;
    this.#turns = options.turns;
    this.#keepContext = options.keepContext ?? false;
    this.trouble = new WriteTrouble(db);
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT one_write');
    this.#release = db.prepare('RELEASE one_write');
    this.#rollbackTo = db.prepare('ROLLBACK TO one_write');
  }

  /** Runs `work` (synchronous statements) in the next batch; resolves with its result once committed. */
  run<T>(work: () => T, options: WriteOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push(this.#job(work, resolve, reject, options));
      if (this.#scheduled) return;
      this.#scheduled = true;
      // setImmediate: after the requests that arrived in this turn have queued their writes.
      setImmediate(() => this.#flush());
    });
  }

  /**
   * Runs `work` in the next batch that commits anyway, or at the latest `withinMs` from now: for writes
   * that nobody answers on, which then add no commit (no fsync) of their own while other writes go on.
   */
  later<T>(work: () => T, withinMs: number, options: WriteOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push(this.#job(work, resolve, reject, options));
      if (this.#scheduled || this.#deferred !== undefined) return;
      this.#deferred = setTimeout(() => {
        this.#deferred = undefined;
        if (!this.#scheduled && this.#queue.length > 0) this.#flush();
      }, withinMs);
    });
  }

  /**
   * A snapshot, not AsyncResource.bind: on Node 20 each bind also defines two deprecated accessors on the
   * bound function, 3 µs a write (docs/performance.md, "Traces").
   */
  #inContext<T>(work: () => T): () => T {
    if (!this.#keepContext) return work;
    const inAskersContext = AsyncLocalStorage.snapshot();
    return () => inAskersContext(work);
  }

  #job<T>(work: () => T, resolve: (value: T) => void, reject: (error: unknown) => void, options: WriteOptions): Job {
    return {
      work: this.#inContext(work),
      durable: options.durable ?? true,
      resolve: resolve as (value: unknown) => void,
      reject,
      deadline: Date.now() + this.#lockWaitMs,
    };
  }

  /** Takes the write lock if it is free; otherwise tries again later and fails the writes that waited too long. */
  #lock(): boolean {
    try {
      this.#begin.run();
      this.#tries = 0;
      return true;
    } catch (error) {
      // Busy: another process holds the lock, so the writes wait (each until its deadline). Anything else
      // (a closed store) fails them all now.
      const busy = String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY');
      const now = Date.now();
      const expired = busy ? this.#queue.filter((job) => job.deadline <= now) : this.#queue;
      this.#queue = busy ? this.#queue.filter((job) => job.deadline > now) : [];
      if (expired.length > 0) {
        const failure = this.trouble.failed(error);
        for (const job of expired) job.reject(failure);
      }
      if (this.#queue.length === 0) {
        this.#tries = 0;
        this.#endTurn();
        return false;
      }
      this.#scheduled = true;
      setTimeout(() => this.#flush(), Math.min(2 ** this.#tries++, MAX_RETRY_DELAY_MS));
      return false;
    }
  }

  /** True when this process may write now; otherwise asks for its turn, and flushes again once it has it. */
  #haveTurn(): boolean {
    if (this.#turns === undefined || this.#turn === 'held') return true;
    if (this.#turn === 'none') {
      this.#turn = 'waiting';
      // Writes that arrive meanwhile join the queue and wait for the same turn.
      this.#scheduled = true;
      this.#turns.request(() => {
        this.#turn = 'held';
        this.#flush();
      });
    }
    return false;
  }

  #endTurn(): void {
    if (this.#turn !== 'held') return;
    this.#turn = 'none';
    this.#turns?.release();
  }

  #flush(): void {
    this.#scheduled = false;
    clearTimeout(this.#deferred);
    this.#deferred = undefined;
    if (this.#queue.length === 0) {
      this.#endTurn();
      return;
    }
    if (!this.#haveTurn()) return;
    // The queue is the batch: nothing joins it while this runs. Set outside the transaction, as SQLite asks.
    const unsynced = this.#queue.every((job) => !job.durable);
    if (unsynced && !this.#setSynchronous('NORMAL')) return;
    try {
      this.#commitBatch();
    } finally {
      if (unsynced) this.#setSynchronous('FULL');
    }
  }

  /**
   * Sets `synchronous` for the batches from now on; a failure (a closed store) fails the writes queued, as
   * BEGIN's would. Not a prepared statement: SQLite applies this pragma as it compiles it, not each run.
   */
  #setSynchronous(level: 'NORMAL' | 'FULL'): boolean {
    try {
      this.#db.pragma(`synchronous = ${level}`);
      return true;
    } catch (error) {
      const failure = this.trouble.failed(error);
      for (const job of this.#queue.splice(0)) job.reject(failure);
      this.#endTurn();
      return false;
    }
  }

  #commitBatch(): void {
    if (!this.#lock()) return;
    const jobs = this.#queue;
    this.#queue = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
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
          outcome = { ok: false, value: this.trouble.failed(error) };
        }
        this.#release.run();
        outcomes.push(outcome);
      }
      this.#commit.run();
    } catch (error) {
      // The commit (or a savepoint statement) failed: nothing of the batch is on disk.
      if (this.#db.inTransaction) this.#rollback.run();
      this.#endTurn();
      const failure = this.trouble.failed(error);
      for (const job of jobs) job.reject(failure);
      return;
    }
    this.#endTurn();
    this.trouble.committed();
    jobs.forEach((job, i) => {
      const outcome = outcomes[i] as { ok: boolean; value: unknown };
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    });
  }
}
