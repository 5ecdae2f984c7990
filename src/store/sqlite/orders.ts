import type Database from 'better-sqlite3';
import { move, type OrderStatus, PLACEABLE_PET_STATUS, PLACED_PET_STATUS } from '../../domain/order-status.js';
import type { PetStatus } from '../../domain/pet-status.js';
import type { Once, OnceResult } from '../once-records.js';
import type { ChangeOrderResult, NewOrderRecord, OrderRecord, PlaceOrderResult } from '../records.js';
import { readQueries } from '../shared/keyset-page.js';
import {
  fromMilliseconds,
  ORDER_COLUMNS,
  type OrderRow,
  orderFromRow,
  PET_COLUMNS,
  type PetRow,
} from '../shared/rows.js';
import { sqliteParam } from '../shared/sql-params.js';
import type { OrderStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import type { OnceRunner } from './idempotency.js';
import type { SqliteOutbox } from './outbox.js';
import { SqliteTableReads } from './table-reads.js';

const ORDER_QUERIES = {
  insert: `INSERT INTO orders (pet_id, quantity, status, created_at) VALUES (?, ?, 'placed', ?) RETURNING ${ORDER_COLUMNS}`,
  ...readQueries('orders', ORDER_COLUMNS, sqliteParam),
};

const fromRow = (row: OrderRow<number>) => orderFromRow(row, fromMilliseconds);

/**
 * Each order operation runs in a group-committed IMMEDIATE transaction (GroupCommit): SQLite's write lock
 * is taken before reading, so the check (pet available, move allowed) and the writes it decides cannot
 * interleave with another process's, and no lock upgrade can deadlock. Steps cost no round trip here, so
 * placing is written step by step; PostgreSQL places in one statement (postgres/orders.ts says why),
 * recording the same events in the same order: the order's, then its pet's.
 */
export class SqliteOrderStore extends SqliteTableReads<OrderRow<number>, OrderRecord> implements OrderStore {
  readonly #place: (order: NewOrderRecord) => PlaceOrderResult;
  readonly #placeOnce: (order: NewOrderRecord, once: Once<OrderRecord>) => OnceResult<PlaceOrderResult>;
  readonly #change: (id: number, to: OrderStatus) => ChangeOrderResult;
  readonly #writes: GroupCommit;

  constructor(db: Database.Database, runOnce: OnceRunner, writes: GroupCommit, outbox: SqliteOutbox) {
    super(db, ORDER_QUERIES, fromRow);
    this.#writes = writes;
    const petStatus = db.prepare<[number], { status: PetStatus }>('SELECT status FROM pets WHERE id = ?');
    const setPetStatus = db.prepare<[string, number], PetRow>(
      `UPDATE pets SET status = ?, version = version + 1 WHERE id = ? RETURNING ${PET_COLUMNS}`,
    );
    /** Moves the pet, recording the move when its status changes (approving an order leaves it pending). */
    const movePet = (petId: number, from: PetStatus, to: PetStatus) => {
      if (from === to) return;
      outbox.record('pet.status_changed', setPetStatus.get(to, petId) as PetRow, from);
    };
    const insert = db.prepare<[number, number, number], OrderRow<number>>(ORDER_QUERIES.insert);
    const setStatus = db.prepare<[string, number], OrderRow<number>>(
      `UPDATE orders SET status = ? WHERE id = ? RETURNING ${ORDER_COLUMNS}`,
    );

    const place = db.transaction((order: NewOrderRecord): PlaceOrderResult => {
      const pet = petStatus.get(order.petId);
      if (pet === undefined) return { outcome: 'pet_not_found' };
      if (pet.status !== PLACEABLE_PET_STATUS) return { outcome: 'pet_not_available', petStatus: pet.status };
      const row = insert.get(order.petId, order.quantity, order.createdAt.getTime()) as OrderRow<number>;
      outbox.record('order.placed', row);
      movePet(order.petId, pet.status, PLACED_PET_STATUS);
      return { outcome: 'placed', order: fromRow(row) };
    });
    this.#place = place;
    this.#placeOnce = db.transaction((order: NewOrderRecord, once: Once<OrderRecord>) =>
      runOnce(
        once,
        () => place(order),
        (result) => (result.outcome === 'placed' ? result.order : undefined),
      ),
    );
    this.#change = db.transaction((id: number, to: OrderStatus): ChangeOrderResult => {
      const current = this.read(id);
      if (current === undefined) return { outcome: 'order_not_found' };
      const decision = move(current.status, to);
      if (!decision.allowed) return { outcome: 'refused', from: current.status };
      const row = setStatus.get(to, id) as OrderRow<number>;
      outbox.record('order.status_changed', row, current.status);
      const pet = petStatus.get(current.petId) as { status: PetStatus };
      movePet(current.petId, pet.status, decision.petStatus);
      return { outcome: 'changed', order: fromRow(row) };
    });
  }

  place(order: NewOrderRecord): Promise<PlaceOrderResult> {
    return this.#writes.run(() => this.#place(order));
  }

  placeOnce(order: NewOrderRecord, once: Once<OrderRecord>): Promise<OnceResult<PlaceOrderResult>> {
    return this.#writes.run(() => this.#placeOnce(order, once));
  }

  changeStatus(id: number, to: OrderStatus): Promise<ChangeOrderResult> {
    return this.#writes.run(() => this.#change(id, to));
  }
}
