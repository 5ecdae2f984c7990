import {
  type EventSubject,
  type EventType,
  ruleOf,
  type SentEventType,
  subjectOf,
  TEST_EVENT_TYPE,
} from '../../domain/event-types.js';
import type { PetPatch } from '../../domain/pet-change.js';
import type { EventRecord, SentEventRecord } from '../records.js';
import { type EventPetRow, type OrderRow, orderFromRow, petFromRow, type ToDate } from './rows.js';
import { type EndpointEventRow, snapshotFromRow } from './webhook-rows.js';

/**
 * An event of the feed, not a test send's: the feed's pages, its head and retention's marker (a cursor
 * before it would skip events) read only these; the test events are there for their deliveries alone.
 */
export const ON_FEED = `type <> '${TEST_EVENT_TYPE}'`;

/**
 * An event a reader of the owner `param` sees: every event but those about another owner's endpoints (the
 * events' generated `owner` column is set for those only); with `param` null, every event (admin keys).
 */
export const SEEN_BY = (param: string) => `(owner IS NULL OR ${param} IS NULL OR owner = ${param})`;

/** An event `e` the endpoint `w` may be sent: one about endpoints only to endpoints of the same owner. */
export const SAME_OWNER = '(e.owner IS NULL OR e.owner = w.owner)';

/** The events table's columns, as both backends select them (tx as a number: 0 on SQLite). */
export interface EventRow<D> {
  seq: number;
  tx: number;
  type: EventType;
  /**
   * What the event is about (`pet/12`): the generated column, from the type's prefix and the data's id, which
   * the delivery engine orders by too; read, not computed again, so the two never disagree.
   */
  subject: string;
  at: D;
  /** The changed pet's, order's or endpoint's row as JSON, in the table's own column names (no secrets). */
  data: string;
  /** The status before a status change; for `pet.updated`, the changed fields' earlier values as JSON. */
  previous_status: string | null;
}

/** A row inside event data keeps its timestamps as the backend wrote them: milliseconds or ISO text. */
const dataDate: ToDate<number | string> = (value) => new Date(value);

type EventData = EventPetRow & OrderRow<number | string> & EndpointEventRow<number | string>;

/** An event's subject, from its data: the row as the change left it. */
const SUBJECTS: Record<EventSubject, (data: EventData) => object> = {
  pet: (data) => ({ pet: petFromRow(data) }),
  order: (data) => ({ order: orderFromRow(data, dataDate) }),
  webhook_endpoint: (data) => ({ endpoint: snapshotFromRow(data, dataDate) }),
};

/** An event's record, as its type's entry in EVENT_RULES says what it keeps (EventRecord spells it out). */
export function eventFromRow<D>(row: EventRow<D>, toDate: ToDate<D>): EventRecord {
  const { previous } = ruleOf(row.type);
  return {
    seq: row.seq,
    position: { tx: row.tx, seq: row.seq },
    at: toDate(row.at),
    type: row.type,
    subject: row.subject,
    ...SUBJECTS[subjectOf(row.type)](JSON.parse(row.data) as EventData),
    ...(previous === 'status' && { previousStatus: row.previous_status }),
    ...(previous === 'fields' && { previous: JSON.parse(row.previous_status ?? '{}') as PetPatch }),
  } as EventRecord;
}

/**
 * A row a claim reads with its delivery: an event's, or a test send's (its data: `{"webhook_id"}`, its
 * subject null: it is about nothing).
 */
export type SentEventRow<D> = Omit<EventRow<D>, 'type' | 'subject'> & { type: SentEventType; subject: string | null };

export function sentEventFromRow<D>(row: SentEventRow<D>, toDate: ToDate<D>): SentEventRecord {
  const { type, subject } = row;
  // Every event of the feed has a subject: its column reads a prefix every type has and the id all data has.
  if (type !== TEST_EVENT_TYPE) return eventFromRow({ ...row, type, subject: subject as string }, toDate);
  const data = JSON.parse(row.data) as { webhook_id: number };
  return { type, webhookId: data.webhook_id, seq: row.seq, at: toDate(row.at) };
}
