import type pg from 'pg';
import type { EventType } from '../../domain/event-types.js';
import { PET_FIELDS } from '../../domain/pet-change.js';
import type { OrderRow, PetRow } from '../shared/rows.js';
import type { EndpointEventRow } from '../shared/webhook-rows.js';

/** The parameter of the pets' traces in a statement that inserts pets: the one after their fields'. */
const PET_TRACES = PET_FIELDS.length + 1;

/**
 * The outbox's write side on PostgreSQL. A statement that inserts pets records their events in the same
 * statement with this CTE (named `pet_created`), over the CTE `inserted` that returned the pet rows and the
 * parameter PET_TRACES, their traces in id order (see ChangeTrace); other writes call recordEvents in their
 * transaction. Webhook deliveries are queued after the commit (fan-out.ts). Event data is the row as JSON
 * in its table's column names, as on SQLite.
 */
export const PET_CREATED_EVENTS = `pet_created AS (
    INSERT INTO events (type, data, trace)
    SELECT 'pet.created', to_jsonb(inserted)::text, ($${PET_TRACES}::text[])[row_number() OVER (ORDER BY inserted.id)]
    FROM inserted ORDER BY inserted.id)`;

const INSERT_EVENTS = `INSERT INTO events (type, data, previous_status, trace)
  SELECT type, data, previous_status, $4::text FROM unnest($1::text[], $2::text[], $3::text[])
  WITH ORDINALITY AS e(type, data, previous_status, n) ORDER BY n`;

export interface NewEvent {
  readonly type: EventType;
  readonly row: PetRow | OrderRow<Date> | EndpointEventRow<Date>;
  readonly previousStatus?: string;
}

/** Records events, in this order, in the client's transaction, with the trace of the change (ChangeTrace). */
export async function recordEvents(
  client: pg.ClientBase,
  events: readonly NewEvent[],
  trace: string | null,
): Promise<void> {
  await client.query({
    name: 'events-insert',
    text: INSERT_EVENTS,
    values: [
      events.map((event) => event.type),
      events.map((event) => JSON.stringify(event.row)),
      events.map((event) => event.previousStatus ?? null),
      trace,
    ],
  });
}
