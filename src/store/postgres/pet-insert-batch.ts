import { PET_FIELDS } from '../../domain/pet-change.js';
import type { NewPetRecord, PetRecord } from '../records.js';
import { PET_COLUMNS, PET_FIELD_LIST, type PetRow, petFromRow, petParameters, petValue } from '../shared/rows.js';
import { lockKey } from './advisory-locks.js';
import { PET_CREATED_EVENTS } from './outbox.js';
import type { Database } from './postgres-db.js';
import { StatementBatch } from './statement-batch.js';

/**
 * One statement inserts a batch under the id-order lock (see PET_QUERIES.insert): `ORDER BY n` draws the
 * identity values in the batch's order, so the k-th smallest id returned belongs to the k-th pet. The
 * pets' events ride in the same statement, each with its own pet's trace.
 */
const INSERT_BATCH = `WITH in_id_order AS (SELECT pg_advisory_xact_lock(${lockKey('pet-ids')})),
  input AS (SELECT * FROM unnest(${petParameters('[]')})
    WITH ORDINALITY AS i(${PET_FIELD_LIST}, n)),
  inserted AS (INSERT INTO pets (${PET_FIELD_LIST})
    SELECT ${PET_FIELD_LIST} FROM input, in_id_order ORDER BY n
    RETURNING ${PET_COLUMNS}),
  ${PET_CREATED_EVENTS}
  SELECT ${PET_COLUMNS} FROM inserted`;

/** A pet to insert, with the trace its create was asked in (ChangeTrace). */
export interface TracedPet {
  readonly pet: NewPetRecord;
  readonly trace: string | null;
}

/**
 * Batched plain creates (see StatementBatch): creates are serialised by the id-order lock anyway; batching
 * turns that queue into throughput. A batch gathers the creates of one event-loop turn.
 */
export function petInsertBatch(db: Database, one: (traced: TracedPet) => Promise<PetRecord>) {
  return new StatementBatch<TracedPet, PetRecord, PetRow[]>({
    one,
    many: (batch) =>
      db.rows<PetRow>('pets-insert-batch', INSERT_BATCH, [
        ...PET_FIELDS.map((field) => batch.map(({ pet }) => petValue(pet, field))),
        batch.map(({ trace }) => trace),
      ]),
    settle,
    // After the requests of this turn have queued theirs.
    gather: (flush) => setImmediate(flush),
  });
}

/** Gives each pet its row: the k-th smallest id was drawn for the k-th pet of the batch. */
function settle(batch: readonly TracedPet[], rows: PetRow[]): Array<PetRecord | Error> {
  rows.sort((a, b) => a.id - b.id);
  return batch.map(({ pet }, i) => {
    const row = rows[i];
    const record = row === undefined ? undefined : petFromRow(row);
    const same = record !== undefined && PET_FIELDS.every((field) => record[field] === petValue(pet, field));
    return same ? record : new Error(`batched insert returned rows out of order (pet ${row?.id ?? 'missing'})`);
  });
}
