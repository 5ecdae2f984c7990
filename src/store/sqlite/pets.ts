import type Database from 'better-sqlite3';
import { PET_FIELDS, type PetPatch } from '../../domain/pet-change.js';
import type { Once, OnceResult } from '../once-records.js';
import type { NewPetRecord, PetRecord, RemovePetResult, UpdatePetResult } from '../records.js';
import { readQueries } from '../shared/keyset-page.js';
import {
  type HoldingOrderRow,
  heldBy,
  petChangeQueries,
  planPetChange,
  previousText,
  updateValues,
} from '../shared/pet-changes.js';
import { PET_COLUMNS, PET_FIELD_LIST, type PetRow, petFromRow, petValues } from '../shared/rows.js';
import { sqliteParam } from '../shared/sql-params.js';
import type { PetStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import type { OnceRunner } from './idempotency.js';
import type { SqliteOutbox } from './outbox.js';
import { SqliteTableReads } from './table-reads.js';

/** The hot queries, exported so a test can check their plans. */
export const PET_QUERIES = {
  insert: `INSERT INTO pets (${PET_FIELD_LIST}) VALUES (${PET_FIELDS.map(() => '?').join(', ')}) RETURNING ${PET_COLUMNS}`,
  ...readQueries('pets', PET_COLUMNS, sqliteParam),
};

/**
 * Pets on SQLite: writes are group-committed (GroupCommit), reads are SqliteTableReads'. A change or removal
 * reads the pet, decides and writes in one IMMEDIATE transaction (the write lock taken first), so nothing
 * of this process or another comes between its check of the version and its write.
 */
export class SqlitePetStore extends SqliteTableReads<PetRow, PetRecord> implements PetStore {
  readonly #insert: (pet: NewPetRecord) => PetRecord;
  readonly #createOnce: (pet: NewPetRecord, once: Once<PetRecord>) => OnceResult<PetRecord>;
  readonly #update: (id: number, patch: PetPatch, expected: readonly number[] | undefined) => UpdatePetResult;
  readonly #remove: (id: number, expected: readonly number[] | undefined) => RemovePetResult;
  readonly #writes: GroupCommit;

  constructor(db: Database.Database, runOnce: OnceRunner, writes: GroupCommit, outbox: SqliteOutbox) {
    super(db, PET_QUERIES, petFromRow);
    this.#writes = writes;
    const insert = db.prepare<unknown[], PetRow>(PET_QUERIES.insert);
    // Each write runs in a savepoint of the group commit: the pet and its event commit together.
    this.#insert = (pet) => {
      const row = insert.get(...petValues(pet)) as PetRow;
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
    const queries = petChangeQueries(sqliteParam);
    const holder = db.prepare<[number], HoldingOrderRow>(queries.holder);
    const update = db.prepare<unknown[], PetRow>(queries.update);
    const remove = db.prepare<[number], PetRow>(queries.remove);
    this.#update = db.transaction(
      (id: number, patch: PetPatch, expected: readonly number[] | undefined): UpdatePetResult => {
        const plan = planPetChange(this.read(id), expected, patch);
        if (plan.outcome === 'refused') return plan.refusal;
        const { pet, after, before } = plan;
        if (Object.keys(after).length === 0) return { outcome: 'updated', pet, previous: {} };
        const order = after.status === undefined ? undefined : holder.get(id);
        if (order !== undefined) return heldBy(order);
        const row = update.get(...updateValues(pet, after)) as PetRow;
        outbox.record('pet.updated', row, previousText(before));
        if (before.status !== undefined) outbox.record('pet.status_changed', row, before.status);
        return { outcome: 'updated', pet: petFromRow(row), previous: before };
      },
    );
    this.#remove = db.transaction((id: number, expected: readonly number[] | undefined): RemovePetResult => {
      const plan = planPetChange(this.read(id), expected, {});
      if (plan.outcome === 'refused') return plan.refusal;
      const order = holder.get(id);
      if (order !== undefined) return heldBy(order);
      const row = remove.get(id) as PetRow;
      outbox.record('pet.deleted', row);
      return { outcome: 'removed', pet: petFromRow(row) };
    });
  }

  create(pet: NewPetRecord): Promise<PetRecord> {
    return this.#writes.run(() => this.#insert(pet));
  }

  createOnce(pet: NewPetRecord, once: Once<PetRecord>): Promise<OnceResult<PetRecord>> {
    return this.#writes.run(() => this.#createOnce(pet, once));
  }

  update(id: number, patch: PetPatch, expected: readonly number[] | undefined): Promise<UpdatePetResult> {
    return this.#writes.run(() => this.#update(id, patch, expected));
  }

  remove(id: number, expected: readonly number[] | undefined): Promise<RemovePetResult> {
    return this.#writes.run(() => this.#remove(id, expected));
  }
}
