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

/**
 * Takes the pet if it is available and records the order, in one statement. Order ids become visible in
 * id order, as pet ids do (see PET_QUERIES.insert): the order-ids lock is taken after the pet and before
 * the id is drawn. Alone, the statement commits itself, so the fleet-wide lock is never held while
 * waiting on this process.
 */
const PLACE = `WITH taken AS (UPDATE pets SET status = $1 WHERE id = $2 AND status = $3 RETURNING id),
  in_id_order AS (SELECT pg_advisory_xact_lock(${lockKey('order-ids')}) FROM taken)
  INSERT INTO orders (pet_id, quantity, status, created_at)
  SELECT taken.id, $4::integer, 'placed', $5::timestamptz FROM taken, in_id_order
  RETURNING ${ORDER_COLUMNS}`;

/** Runs one named statement: on the pool (a statement of its own) or on a transaction's client. */
type Rows = <R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<R[]>;

async function placeWith(rows: Rows, order: NewOrderRecord): Promise<PlaceOrderResult> {
  const [placed] = await rows<OrderRow<Date>>('orders-place', PLACE, [
    PLACED_PET_STATUS,
    order.petId,
    PLACEABLE_PET_STATUS,
    order.quantity,
    order.createdAt,
  ]);
  if (placed !== undefined) return { outcome: 'placed', order: fromRow(placed) };
  const [pet] = await rows<{ status: PetStatus }>('orders-pet-status', 'SELECT status FROM pets WHERE id = $1', [
    order.petId,
  ]);
  return pet === undefined ? { outcome: 'pet_not_found' } : { outcome: 'pet_not_available', petStatus: pet.status };
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
    return placeWith((name, text, values) => this.db.rows(name, text, values), order);
  }

  async placeOnce(order: NewOrderRecord, once: Once<OrderRecord>): Promise<OnceResult<PlaceOrderResult>> {
    return pgOnce(
      this.db,
      once,
      (client) => placeWith(async (name, text, values) => (await client.query({ name, text, values })).rows, order),
      (result) => (result.outcome === 'placed' ? result.order : undefined),
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
