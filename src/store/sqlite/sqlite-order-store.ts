import type Database from 'better-sqlite3';
import { move, type OrderStatus, PLACEABLE_PET_STATUS, PLACED_PET_STATUS } from '../../domain/order-status.js';
import type { PetStatus } from '../../schemas/pet.js';
import { ORDER_COLUMNS } from '../rows.js';
import type {
  ChangeOrderResult,
  NewOrderRecord,
  Once,
  OnceResult,
  OrderPageQuery,
  OrderRecord,
  OrderStore,
  PlaceOrderResult,
} from '../store.js';
import type { GroupCommit } from './group-commit.js';
import type { OnceRunner } from './sqlite-once.js';

interface OrderRow {
  id: number;
  pet_id: number;
  quantity: number;
  status: OrderStatus;
  created_at: number;
}

export const ORDER_QUERIES = {
  insert: `INSERT INTO orders (pet_id, quantity, status, created_at) VALUES (?, ?, 'placed', ?) RETURNING ${ORDER_COLUMNS}`,
  get: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ?`,
  page: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id > ? ORDER BY id LIMIT ?`,
  pageByStatus: `SELECT ${ORDER_COLUMNS} FROM orders WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
} as const;

function orderFromRow(row: OrderRow): OrderRecord {
  return {
    id: row.id,
    petId: row.pet_id,
    quantity: row.quantity,
    status: row.status,
    createdAt: new Date(row.created_at),
  };
}

/**
 * Each order operation runs in a group-committed IMMEDIATE transaction (GroupCommit): SQLite's write lock
 * is taken before reading, so the check (pet available, move allowed) and the writes it decides cannot
 * interleave with another process's, and no lock upgrade can deadlock.
 */
export class SqliteOrderStore implements OrderStore {
  readonly #place: (order: NewOrderRecord) => PlaceOrderResult;
  readonly #placeOnce: (order: NewOrderRecord, once: Once<OrderRecord>) => OnceResult<PlaceOrderResult>;
  readonly #change: (id: number, to: OrderStatus) => ChangeOrderResult;
  readonly #get: Database.Statement<[number]>;
  readonly #page: Database.Statement<[number, number]>;
  readonly #pageByStatus: Database.Statement<[string, number, number]>;

  readonly #writes: GroupCommit;

  constructor(db: Database.Database, runOnce: OnceRunner, writes: GroupCommit) {
    this.#writes = writes;
    const petStatus = db.prepare<[number], { status: PetStatus }>('SELECT status FROM pets WHERE id = ?');
    const setPetStatus = db.prepare<[string, number]>('UPDATE pets SET status = ? WHERE id = ?');
    const insert = db.prepare<[number, number, number], OrderRow>(ORDER_QUERIES.insert);
    const setStatus = db.prepare<[string, number], OrderRow>(
      `UPDATE orders SET status = ? WHERE id = ? RETURNING ${ORDER_COLUMNS}`,
    );
    this.#get = db.prepare(ORDER_QUERIES.get);
    this.#page = db.prepare(ORDER_QUERIES.page);
    this.#pageByStatus = db.prepare(ORDER_QUERIES.pageByStatus);

    const place = db.transaction((order: NewOrderRecord): PlaceOrderResult => {
      const pet = petStatus.get(order.petId);
      if (pet === undefined) return { outcome: 'pet_not_found' };
      if (pet.status !== PLACEABLE_PET_STATUS) return { outcome: 'pet_not_available', petStatus: pet.status };
      setPetStatus.run(PLACED_PET_STATUS, order.petId);
      const row = insert.get(order.petId, order.quantity, order.createdAt.getTime()) as OrderRow;
      return { outcome: 'placed', order: orderFromRow(row) };
    });
    this.#place = place;
    const placeOnce = db.transaction((order: NewOrderRecord, once: Once<OrderRecord>) =>
      runOnce(
        once,
        () => place(order),
        (result) => (result.outcome === 'placed' ? result.order : undefined),
      ),
    );
    this.#placeOnce = placeOnce;

    const change = db.transaction((id: number, to: OrderStatus): ChangeOrderResult => {
      const current = this.#get.get(id) as OrderRow | undefined;
      if (current === undefined) return { outcome: 'order_not_found' };
      const decision = move(current.status, to);
      if (!decision.allowed) return { outcome: 'refused', reason: decision.reason };
      setPetStatus.run(decision.petStatus, current.pet_id);
      return { outcome: 'changed', order: orderFromRow(setStatus.get(to, id) as OrderRow) };
    });
    this.#change = change;
  }

  place(order: NewOrderRecord): Promise<PlaceOrderResult> {
    return this.#writes.run(() => this.#place(order));
  }

  placeOnce(order: NewOrderRecord, once: Once<OrderRecord>): Promise<OnceResult<PlaceOrderResult>> {
    return this.#writes.run(() => this.#placeOnce(order, once));
  }

  async get(id: number): Promise<OrderRecord | undefined> {
    const row = this.#get.get(id) as OrderRow | undefined;
    return row === undefined ? undefined : orderFromRow(row);
  }

  async list(query: OrderPageQuery): Promise<OrderRecord[]> {
    const afterId = query.afterId ?? 0;
    const rows =
      query.status === undefined
        ? this.#page.all(afterId, query.limit)
        : this.#pageByStatus.all(query.status, afterId, query.limit);
    return (rows as OrderRow[]).map(orderFromRow);
  }

  changeStatus(id: number, to: OrderStatus): Promise<ChangeOrderResult> {
    return this.#writes.run(() => this.#change(id, to));
  }
}
