import type pg from 'pg';
import { move, type OrderStatus, PLACEABLE_PET_STATUS, PLACED_PET_STATUS } from '../../domain/order-status.js';
import type { PetStatus } from '../../domain/pet-status.js';
import type { ChangeTrace } from '../change-trace.js';
import type { Once, OnceResult } from '../once-records.js';
import type { ChangeOrderResult, NewOrderRecord, OrderRecord, PlaceOrderResult } from '../records.js';
import { readQueries } from '../shared/keyset-page.js';
import {
  asDate,
  ORDER_COLUMNS,
  type OrderRow,
  orderFromRow,
  PET_COLUMNS,
  type PetRow,
  QUALIFIED_PET_COLUMNS,
} from '../shared/rows.js';
import { postgresParam } from '../shared/sql-params.js';
import type { OrderStore } from '../store.js';
import { lockKey } from './advisory-locks.js';
import { pgOnce } from './idempotency.js';
import { type NewEvent, recordEvents } from './outbox.js';
import type { Database } from './postgres-db.js';
import { PostgresTableReads } from './table-reads.js';

const ORDER_QUERIES = readQueries('orders', ORDER_COLUMNS, postgresParam);

const fromRow = (row: OrderRow<Date>) => orderFromRow(row, asDate);

/**
 * Takes the pet if it is available and records the order, in one statement. Order ids become visible in
 * id order, as pet ids do (see PET_QUERIES.insert): the order-ids lock is taken after the pet and before
 * the id is drawn. Alone, the statement commits itself, so the fleet-wide lock is never held while
 * waiting on this process. The same statement records `order.placed`, then the pet's `pet.status_changed`.
 * SQLite places step by step (sqlite/orders.ts), where each step is a call within the process; here the
 * same steps as statements of a transaction would hold that lock and the pet's row over several round
 * trips, so one statement is the reason for the other shape. Both record the same events in the same
 * order, which test/store/store-contract.test.ts holds for both backends.
 */
const PLACE = `WITH taken AS (UPDATE pets SET status = $1, version = version + 1 WHERE id = $2 AND status = $3
    RETURNING ${PET_COLUMNS}),
  in_id_order AS (SELECT pg_advisory_xact_lock(${lockKey('order-ids')}) FROM taken),
  placed AS (INSERT INTO orders (pet_id, quantity, status, created_at)
    SELECT taken.id, $4::integer, 'placed', $5::timestamptz FROM taken, in_id_order
    RETURNING ${ORDER_COLUMNS}),
  recorded AS (INSERT INTO events (type, data, previous_status, trace)
    SELECT type, data, previous_status, $6::text FROM (
      SELECT 1 AS n, 'order.placed' AS type, to_jsonb(placed)::text AS data, NULL AS previous_status FROM placed
      UNION ALL
      SELECT 2, 'pet.status_changed', to_jsonb(taken)::text, $3 FROM taken, placed
    ) AS e ORDER BY n)
  SELECT ${ORDER_COLUMNS} FROM placed`;

/** Moves the pet when its status changes (approving leaves it pending), returning it and its old status. */
const MOVE_PET = `UPDATE pets SET status = $1, version = pets.version + 1
  FROM (SELECT id, status AS previous FROM pets WHERE id = $2) AS old
  WHERE pets.id = old.id AND old.previous <> $1
  RETURNING ${QUALIFIED_PET_COLUMNS}, old.previous`;

/** Runs one named statement: on the pool (a statement of its own) or on a transaction's client. */
type Rows = <R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<R[]>;

async function placeWith(rows: Rows, order: NewOrderRecord, trace: string | null): Promise<PlaceOrderResult> {
  const [placed] = await rows<OrderRow<Date>>('orders-place', PLACE, [
    PLACED_PET_STATUS,
    order.petId,
    PLACEABLE_PET_STATUS,
    order.quantity,
    order.createdAt,
    trace,
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
  readonly #trace: ChangeTrace;

  constructor(db: Database, trace: ChangeTrace) {
    super(db, 'orders', ORDER_QUERIES, fromRow);
    this.#trace = trace;
  }

  async place(order: NewOrderRecord): Promise<PlaceOrderResult> {
    return placeWith((name, text, values) => this.db.rows(name, text, values), order, this.#trace());
  }

  async placeOnce(order: NewOrderRecord, once: Once<OrderRecord>): Promise<OnceResult<PlaceOrderResult>> {
    const trace = this.#trace();
    return pgOnce(
      this.db,
      once,
      (client) =>
        placeWith(async (name, text, values) => (await client.query({ name, text, values })).rows, order, trace),
      (result) => (result.outcome === 'placed' ? result.order : undefined),
    );
  }

  async changeStatus(id: number, to: OrderStatus): Promise<ChangeOrderResult> {
    const trace = this.#trace();
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<OrderRow<Date>>(`${ORDER_QUERIES.get} FOR UPDATE`, [id]);
      const current = rows[0];
      if (current === undefined) return { outcome: 'order_not_found' };
      const decision = move(current.status, to);
      if (!decision.allowed) return { outcome: 'refused', from: current.status };
      const changed = await client.query<OrderRow<Date>>(
        `UPDATE orders SET status = $1 WHERE id = $2 RETURNING ${ORDER_COLUMNS}`,
        [to, id],
      );
      const order = changed.rows[0] as OrderRow<Date>;
      const events: NewEvent[] = [{ type: 'order.status_changed', row: order, previousStatus: current.status }];
      // The pet is held by this order alone (it was available when placed), so nothing moves it meanwhile.
      const pet = await client.query<PetRow & { previous: PetStatus }>(MOVE_PET, [decision.petStatus, current.pet_id]);
      const moved = pet.rows[0];
      if (moved !== undefined) {
        const { previous, ...row } = moved;
        events.push({ type: 'pet.status_changed', row, previousStatus: previous });
      }
      await recordEvents(client, events, trace);
      return { outcome: 'changed', order: fromRow(order) };
    });
  }
}
