import { PET_COLUMNS, type PetRow, petFromRow } from '../rows.js';
import { type NewPetRecord, type PetRecord, StoreUnavailableError } from '../store.js';
import { lockKey } from './advisory-locks.js';
import { PET_CREATED_EVENTS } from './outbox.js';
import type { Database } from './postgres-db.js';

/** Rows in one statement at most: the arrays stay small, and one slow batch holds few callers. */
const MAX_BATCH = 256;

/**
 * One statement inserts a batch under the id-order lock (see PET_QUERIES.insert): `ORDER BY n` draws the
 * identity values in the batch's order, so the k-th smallest id returned belongs to the k-th pet. The
 * pets' events ride in the same statement.
 */
const INSERT_BATCH = `WITH in_id_order AS (SELECT pg_advisory_xact_lock(${lockKey('pet-ids')})),
  input AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS i(name, category_id, status, n)),
  inserted AS (INSERT INTO pets (name, category_id, status)
    SELECT name, category_id, status FROM input, in_id_order ORDER BY n
    RETURNING ${PET_COLUMNS}),
  ${PET_CREATED_EVENTS}
  SELECT ${PET_COLUMNS} FROM inserted`;

interface Job {
  readonly pet: NewPetRecord;
  readonly resolve: (pet: PetRecord) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for plain creates on PostgreSQL: while one batch is being committed, the creates that
 * arrive queue up and go together in the next, one statement and one commit (one WAL flush) for all.
 * Creates are serialised by the id-order lock anyway; batching turns that queue into throughput.
 * Every promise settles after the commit.
 */
export class PetInsertBatch {
  readonly #db: Database;
  readonly #single: (pet: NewPetRecord) => Promise<PetRecord>;
  #queue: Job[] = [];
  #flushing = false;

  constructor(db: Database, single: (pet: NewPetRecord) => Promise<PetRecord>) {
    this.#db = db;
    this.#single = single;
  }

  insert(pet: NewPetRecord): Promise<PetRecord> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ pet, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        // After the requests of this turn have queued theirs.
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const jobs = this.#queue.splice(0, MAX_BATCH);
      if (jobs.length === 1) {
        const [job] = jobs as [Job];
        await this.#single(job.pet).then(job.resolve, job.reject);
        continue;
      }
      let rows: PetRow[];
      try {
        rows = await this.#db.rows<PetRow>('pets-insert-batch', INSERT_BATCH, [
          jobs.map((job) => job.pet.name),
          jobs.map((job) => job.pet.categoryId),
          jobs.map((job) => job.pet.status),
        ]);
      } catch (error) {
        if (error instanceof StoreUnavailableError) {
          for (const job of jobs) job.reject(error);
          continue;
        }
        // Not an outage and nothing committed: one pet may be refused by the database. One by one, in
        // order (all at once would hold every pool connection waiting on the id-order lock).
        for (const job of jobs) await this.#single(job.pet).then(job.resolve, job.reject);
        continue;
      }
      // Committed: from here on nothing may send the batch to the fallback (it would insert it twice).
      this.#settle(jobs, rows);
    }
    this.#flushing = false;
  }

  /** Gives each caller its row: the k-th smallest id was drawn for the k-th pet of the batch. */
  #settle(jobs: Job[], rows: PetRow[]): void {
    rows.sort((a, b) => a.id - b.id);
    for (const [i, job] of jobs.entries()) {
      const row = rows[i];
      const same =
        row !== undefined &&
        row.name === job.pet.name &&
        row.category_id === job.pet.categoryId &&
        row.status === job.pet.status;
      if (same) job.resolve(petFromRow(row));
      else job.reject(new Error(`batched insert returned rows out of order (pet ${row?.id ?? 'missing'})`));
    }
  }
}
