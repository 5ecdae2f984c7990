import type Database from 'better-sqlite3';
import type { Once, OnceResult } from '../once-records.js';
import type { NewPetRecord, PetRecord } from '../records.js';
import { readQueries } from '../shared/keyset-page.js';
import { PET_COLUMNS, type PetRow, petFromRow } from '../shared/rows.js';
import { sqliteParam } from '../shared/sql-params.js';
import type { PetStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import type { OnceRunner } from './idempotency.js';
import type { SqliteOutbox } from './outbox.js';
import { SqliteTableReads } from './table-reads.js';

/** The hot queries, exported so a test can check their plans. */
export const PET_QUERIES = {
  insert: `INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${PET_COLUMNS}`,
  ...readQueries('pets', PET_COLUMNS, sqliteParam),
};

/** Pets on SQLite: writes are group-committed (GroupCommit), reads are SqliteTableReads'. */
export class SqlitePetStore extends SqliteTableReads<PetRow, PetRecord> implements PetStore {
  readonly #insert: (pet: NewPetRecord) => PetRecord;
  readonly #createOnce: (pet: NewPetRecord, once: Once<PetRecord>) => OnceResult<PetRecord>;
  readonly #writes: GroupCommit;

  constructor(db: Database.Database, runOnce: OnceRunner, writes: GroupCommit, outbox: SqliteOutbox) {
    super(db, PET_QUERIES, petFromRow);
    this.#writes = writes;
    const insert = db.prepare<[string, number, string], PetRow>(PET_QUERIES.insert);
    // Each write runs in a savepoint of the group commit: the pet and its event commit together.
    this.#insert = (pet) => {
      const row = insert.get(pet.name, pet.categoryId, pet.status) as PetRow;
      outbox.record('pet.created', row);
      return petFromRow(row);
    };
    this.#createOnce = db.transaction((pet: NewPetRecord, once: Once<PetRecord>) =>
      runOnce(
        once,
        () => this.#insert(pet),
        (created) => created,
      ),
    );
  }

  create(pet: NewPetRecord): Promise<PetRecord> {
    return this.#writes.run(() => this.#insert(pet));
  }

  createOnce(pet: NewPetRecord, once: Once<PetRecord>): Promise<OnceResult<PetRecord>> {
    return this.#writes.run(() => this.#createOnce(pet, once));
  }
}
