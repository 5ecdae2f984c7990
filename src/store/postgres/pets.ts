import type pg from 'pg';
import type { PetPatch } from '../../domain/pet-change.js';
import type { ChangeTrace } from '../change-trace.js';
import type { Once, OnceResult } from '../once-records.js';
import type { NewPetRecord, PetRecord, RemovePetResult, UpdatePetResult } from '../records.js';
import { readQueries } from '../shared/keyset-page.js';
import {
  type HoldingOrderRow,
  heldBy,
  type PetChangePlan,
  petChangeQueries,
  planPetChange,
  previousText,
  updateValues,
} from '../shared/pet-changes.js';
import { PET_COLUMNS, PET_FIELD_LIST, type PetRow, petFromRow, petParameters, petValues } from '../shared/rows.js';
import { postgresParam } from '../shared/sql-params.js';
import type { PetStore } from '../store.js';
import { lockKey } from './advisory-locks.js';
import { pgOnce } from './idempotency.js';
import { type NewEvent, PET_CREATED_EVENTS, recordEvents } from './outbox.js';
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
    inserted AS (INSERT INTO pets (${PET_FIELD_LIST}) SELECT ${petParameters()} FROM in_id_order
      RETURNING ${PET_COLUMNS}),
    ${PET_CREATED_EVENTS}
    SELECT ${PET_COLUMNS} FROM inserted`,
  ...readQueries('pets', PET_COLUMNS, postgresParam),
};

const insertValues = (pet: NewPetRecord, trace: string | null) => [...petValues(pet), [trace]];

const CHANGE_QUERIES = {
  ...petChangeQueries(postgresParam),
  /** The pet, locked until the change commits: a placement or another change waits for it, and then sees it. */
  lock: `${PET_QUERIES.get} FOR UPDATE`,
};

/** One named statement on a transaction's client. */
async function rowsOf<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  name: string,
  text: string,
  values: unknown[],
) {
  return (await client.query<R>({ name, text, values })).rows;
}

/**
 * Pets on PostgreSQL: plain creates go in batches (petInsertBatch), reads are PostgresTableReads'. A change
 * or removal locks the pet's row (FOR UPDATE) before deciding: a concurrent change waits and then decides on
 * what this one left, and a placement (its UPDATE of the pet) waits and then re-checks the pet's status or
 * finds it gone. Under READ COMMITTED each statement after the lock sees every order committed before it.
 */
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

  async update(id: number, patch: PetPatch, expected: readonly number[] | undefined): Promise<UpdatePetResult> {
    const trace = this.#trace();
    return this.db.transaction(async (client) => {
      const plan = await this.#plan(client, id, expected, patch);
      if (plan.outcome === 'refused') return plan.refusal;
      const { pet, after, before } = plan;
      if (Object.keys(after).length === 0) return { outcome: 'updated', pet, previous: {} };
      const [order] = after.status === undefined ? [] : await this.#holder(client, id);
      if (order !== undefined) return heldBy(order);
      const [row] = await rowsOf<PetRow>(client, 'pets-update', CHANGE_QUERIES.update, updateValues(pet, after));
      const changed = row as PetRow;
      const events: NewEvent[] = [{ type: 'pet.updated', row: changed, previousStatus: previousText(before) }];
      if (before.status !== undefined) {
        events.push({ type: 'pet.status_changed', row: changed, previousStatus: before.status });
      }
      await recordEvents(client, events, trace);
      return { outcome: 'updated', pet: petFromRow(changed), previous: before };
    });
  }

  async remove(id: number, expected: readonly number[] | undefined): Promise<RemovePetResult> {
    const trace = this.#trace();
    return this.db.transaction(async (client) => {
      const plan = await this.#plan(client, id, expected, {});
      if (plan.outcome === 'refused') return plan.refusal;
      const [order] = await this.#holder(client, id);
      if (order !== undefined) return heldBy(order);
      const [row] = await rowsOf<PetRow>(client, 'pets-remove', CHANGE_QUERIES.remove, [id]);
      const removed = row as PetRow;
      await recordEvents(client, [{ type: 'pet.deleted', row: removed }], trace);
      return { outcome: 'removed', pet: petFromRow(removed) };
    });
  }

  async #plan(
    client: pg.ClientBase,
    id: number,
    expected: readonly number[] | undefined,
    patch: PetPatch,
  ): Promise<PetChangePlan> {
    const [row] = await rowsOf<PetRow>(client, 'pets-lock', CHANGE_QUERIES.lock, [id]);
    return planPetChange(row === undefined ? undefined : petFromRow(row), expected, patch);
  }

  #holder(client: pg.ClientBase, id: number): Promise<HoldingOrderRow[]> {
    return rowsOf<HoldingOrderRow>(client, 'pets-holder', CHANGE_QUERIES.holder, [id]);
  }
}
