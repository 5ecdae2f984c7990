import type { ChangeTrace } from '../change-trace.js';
import type { Once, OnceResult } from '../once-records.js';
import type { NewPetRecord, PetRecord } from '../records.js';
import { readQueries } from '../shared/keyset-page.js';
import { PET_COLUMNS, type PetRow, petFromRow } from '../shared/rows.js';
import { postgresParam } from '../shared/sql-params.js';
import type { PetStore } from '../store.js';
import { lockKey } from './advisory-locks.js';
import { pgOnce } from './idempotency.js';
import { PET_CREATED_EVENTS } from './outbox.js';
import { petInsertBatch, type TracedPet } from './pet-insert-batch.js';
import type { Database } from './postgres-db.js';
import type { StatementBatch } from './statement-batch.js';
import { PostgresTableReads } from './table-reads.js';

/**
 * The hot queries, exported so a test can check their plans.
 *
 * Inserts take a transaction-level advisory lock before the identity value is drawn and hold it until
 * commit, so pets become visible in id order: a reader never sees id N+1 while N is still in flight,
 * and keyset pages never skip a pet. (Without it, two concurrent inserts can commit out of id order.)
 * The same statement records each pet's `pet.created` event.
 */
export const PET_QUERIES = {
  insert: `WITH in_id_order AS (SELECT pg_advisory_xact_lock(${lockKey('pet-ids')})),
    inserted AS (INSERT INTO pets (name, category_id, status) SELECT $1::text, $2::bigint, $3::text FROM in_id_order
      RETURNING ${PET_COLUMNS}),
    ${PET_CREATED_EVENTS}
    SELECT ${PET_COLUMNS} FROM inserted`,
  ...readQueries('pets', PET_COLUMNS, postgresParam),
};

const insertValues = (pet: NewPetRecord, trace: string | null) => [pet.name, pet.categoryId, pet.status, [trace]];

/** Pets on PostgreSQL: plain creates go in batches (petInsertBatch), reads are PostgresTableReads'. */
export class PostgresPetStore extends PostgresTableReads<PetRow, PetRecord> implements PetStore {
  readonly #batch: StatementBatch<TracedPet, PetRecord, PetRow[]>;
  readonly #trace: ChangeTrace;

  constructor(db: Database, trace: ChangeTrace) {
    super(db, 'pets', PET_QUERIES, petFromRow);
    this.#batch = petInsertBatch(db, (traced) => this.#insertOne(traced));
    this.#trace = trace;
  }

  create(pet: NewPetRecord): Promise<PetRecord> {
    return this.#batch.run({ pet, trace: this.#trace() });
  }

  async #insertOne({ pet, trace }: TracedPet): Promise<PetRecord> {
    const [row] = await this.db.rows<PetRow>('pets-insert', PET_QUERIES.insert, insertValues(pet, trace));
    return petFromRow(row as PetRow);
  }

  async createOnce(pet: NewPetRecord, once: Once<PetRecord>): Promise<OnceResult<PetRecord>> {
    const trace = this.#trace();
    return pgOnce(
      this.db,
      once,
      async (client) => {
        const { rows } = await client.query<PetRow>(PET_QUERIES.insert, insertValues(pet, trace));
        return petFromRow(rows[0] as PetRow);
      },
      (created) => created,
    );
  }
}
