import type pg from 'pg';
import { move, type OrderStatus, PLACEABLE_PET_STATUS, PLACED_PET_STATUS } from '../../domain/order-status.js';
import type { PetStatus } from '../../domain/pet-status.js';
import { readQueries } from '../keyset-page.js';
import { asDate, ORDER_COLUMNS, type OrderRow, orderFromRow } from '../rows.js';
import { postgresParam } from '../sql-params.js';
import type {
  ChangeOrderResult,
  NewOrderRecord,
  Once,
  OnceResult,
  OrderRecord,
  OrderStore,
  PlaceOrderResult,
} from '../store.js';
import { lockKey } from './advisory-locks.js';
import { pgOnce } from './idempotency.js';
import type { Database } from './postgres-db.js';
import { PostgresTableReads } from './table-reads.js';

export const ORDER_QUERIES = readQueries('orders', ORDER_COLUMNS, postgresParam);

const fromRow = (row: OrderRow<Date>) => orderFromRow(row, asDate);

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
  const { rows } = await client.query<OrderRow<Date>>(
    `INSERT INTO orders (pet_id, quantity, status, created_at) VALUES ($1, $2, 'placed', $3)
     RETURNING ${ORDER_COLUMNS}`,
    [order.petId, order.quantity, order.createdAt],
  );
  return { outcome: 'placed', order: fromRow(rows[0] as OrderRow<Date>) };
}

/**
 * Placing takes the pet with a conditional UPDATE (`… AND status = 'available'`): under concurrency
 * PostgreSQL re-checks the condition after the competing transaction commits, so exactly one order
 * wins and the others see `pending`. Status changes lock the order row (FOR UPDATE) before deciding.
 */
export class PostgresOrderStore extends PostgresTableReads<OrderRow<Date>, OrderRecord> implements OrderStore {
  constructor(db: Database) {
    super(db, 'orders', ORDER_QUERIES, fromRow);
  }

  async place(order: NewOrderRecord): Promise<PlaceOrderResult> {
    return this.db.transaction((client) => placeWith(client, order));
  }

  async placeOnce(order: NewOrderRecord, once: Once<OrderRecord>): Promise<OnceResult<PlaceOrderResult>> {
    return this.db.transaction((client) =>
      pgOnce(
        client,
        once,
        () => placeWith(client, order),
        (result) => (result.outcome === 'placed' ? result.order : undefined),
      ),
    );
  }

  async changeStatus(id: number, to: OrderStatus): Promise<ChangeOrderResult> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<OrderRow<Date>>(`${ORDER_QUERIES.get} FOR UPDATE`, [id]);
      const current = rows[0];
      if (current === undefined) return { outcome: 'order_not_found' };
      const decision = move(current.status, to);
      if (!decision.allowed) return { outcome: 'refused', from: current.status };
      await client.query('UPDATE pets SET status = $1 WHERE id = $2', [decision.petStatus, current.pet_id]);
      const changed = await client.query<OrderRow<Date>>(
        `UPDATE orders SET status = $1 WHERE id = $2 RETURNING ${ORDER_COLUMNS}`,
        [to, id],
      );
      return { outcome: 'changed', order: fromRow(changed.rows[0] as OrderRow<Date>) };
    });
  }
}
