import type pg from 'pg';
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
import { type Database, lockKey } from './postgres-db.js';
import { pgOnce } from './postgres-once.js';

interface OrderRow {
  id: number;
  pet_id: number;
  quantity: number;
  status: OrderStatus;
  created_at: Date;
}

export const ORDER_QUERIES = {
  get: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`,
  page: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id > $1 ORDER BY id LIMIT $2`,
  pageByStatus: `SELECT ${ORDER_COLUMNS} FROM orders WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
} as const;

function orderFromRow(row: OrderRow): OrderRecord {
  return { id: row.id, petId: row.pet_id, quantity: row.quantity, status: row.status, createdAt: row.created_at };
}

/** Takes the pet if it is available and records the order, on the caller's transaction. */
async function placeWith(client: pg.ClientBase, order: NewOrderRecord): Promise<PlaceOrderResult> {
  const taken = await client.query('UPDATE pets SET status = $1 WHERE id = $2 AND status = $3', [
    PLACED_PET_STATUS,
    order.petId,
    PLACEABLE_PET_STATUS,
  ]);
  if (taken.rowCount === 0) {
    const { rows } = await client.query<{ status: PetStatus }>('SELECT status FROM pets WHERE id = $1', [order.petId]);
    const pet = rows[0];
    return pet === undefined ? { outcome: 'pet_not_found' } : { outcome: 'pet_not_available', petStatus: pet.status };
  }
  // Order ids become visible in id order, as pet ids do (see PET_QUERIES.insert).
  await client.query(`SELECT pg_advisory_xact_lock(${lockKey('order-ids')})`);
  const { rows } = await client.query<OrderRow>(
    `INSERT INTO orders (pet_id, quantity, status, created_at) VALUES ($1, $2, 'placed', $3)
     RETURNING ${ORDER_COLUMNS}`,
    [order.petId, order.quantity, order.createdAt],
  );
  return { outcome: 'placed', order: orderFromRow(rows[0] as OrderRow) };
}

/**
 * Placing takes the pet with a conditional UPDATE (`… AND status = 'available'`): under concurrency
 * PostgreSQL re-checks the condition after the competing transaction commits, so exactly one order
 * wins and the others see `pending`. Status changes lock the order row (FOR UPDATE) before deciding.
 */
export class PostgresOrderStore implements OrderStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async place(order: NewOrderRecord): Promise<PlaceOrderResult> {
    return this.#db.transaction((client) => placeWith(client, order));
  }

  async placeOnce(order: NewOrderRecord, once: Once<OrderRecord>): Promise<OnceResult<PlaceOrderResult>> {
    return this.#db.transaction((client) =>
      pgOnce(
        client,
        once,
        () => placeWith(client, order),
        (result) => (result.outcome === 'placed' ? result.order : undefined),
      ),
    );
  }

  async get(id: number): Promise<OrderRecord | undefined> {
    const [row] = await this.#db.rows<OrderRow>('orders-get', ORDER_QUERIES.get, [id]);
    return row === undefined ? undefined : orderFromRow(row);
  }

  async list(query: OrderPageQuery): Promise<OrderRecord[]> {
    const afterId = query.afterId ?? 0;
    const rows =
      query.status === undefined
        ? await this.#db.rows<OrderRow>('orders-page', ORDER_QUERIES.page, [afterId, query.limit])
        : await this.#db.rows<OrderRow>('orders-page-status', ORDER_QUERIES.pageByStatus, [
            query.status,
            afterId,
            query.limit,
          ]);
    return rows.map(orderFromRow);
  }

  async changeStatus(id: number, to: OrderStatus): Promise<ChangeOrderResult> {
    return this.#db.transaction(async (client) => {
      const { rows } = await client.query<OrderRow>(`${ORDER_QUERIES.get} FOR UPDATE`, [id]);
      const current = rows[0];
      if (current === undefined) return { outcome: 'order_not_found' };
      const decision = move(current.status, to);
      if (!decision.allowed) return { outcome: 'refused', reason: decision.reason };
      await client.query('UPDATE pets SET status = $1 WHERE id = $2', [decision.petStatus, current.pet_id]);
      const changed = await client.query<OrderRow>(
        `UPDATE orders SET status = $1 WHERE id = $2 RETURNING ${ORDER_COLUMNS}`,
        [to, id],
      );
      return { outcome: 'changed', order: orderFromRow(changed.rows[0] as OrderRow) };
    });
  }
}
