import type { EventPosition } from '../domain/event-position.js';
import type { EventType } from '../domain/event-types.js';
import type { OrderStatus } from '../domain/order-status.js';
import type { PetStatus } from '../domain/pet-status.js';
import type { OrderRecord, PetRecord } from './store.js';

/** One change, as the write that made it records it (the records are the state after the change). */
export type Change =
  | { readonly type: 'pet.created'; readonly pet: PetRecord }
  | { readonly type: 'pet.status_changed'; readonly pet: PetRecord; readonly previousStatus: PetStatus }
  | { readonly type: 'order.placed'; readonly order: OrderRecord }
  | { readonly type: 'order.status_changed'; readonly order: OrderRecord; readonly previousStatus: OrderStatus };

/** A recorded change: its feed position, its sequence number (the event id's) and when it was recorded. */
export type EventRecord = Change & {
  readonly seq: number;
  readonly position: EventPosition;
  readonly at: Date;
};

export interface EventQuery {
  /** Events after this position; from the oldest kept when undefined. */
  readonly after: EventPosition | undefined;
  readonly limit: number;
  readonly type?: EventType | undefined;
}

export type EventPage =
  | { readonly outcome: 'page'; readonly events: EventRecord[] }
  /** Events after the position were removed by retention: reading on would skip them. */
  | { readonly outcome: 'gone' };

/**
 * The outbox, read side: every write of pets and orders records its events in its own transaction (the
 * write side lives with each entity store), and the feed reads them here.
 */
export interface EventStore {
  /** Events after a position, oldest first: only ones that no event committed later can precede. */
  list(query: EventQuery): Promise<EventPage>;
  /** The position of the newest event shown now: reading after it misses nothing committed later. */
  head(): Promise<EventPosition>;
  /** Removes the events recorded before `before` (and their deliveries); returns how many. */
  purge(before: Date): Promise<number>;
  /**
   * Calls `onChange` soon after events may have become visible, committed by this process or another, until
   * the returned function is called. It may also call it when nothing changed. Each call watches on its own
   * (a timer; on PostgreSQL also a connection): one per process serves every stream (src/events/feed-bell.ts).
   */
  watch(onChange: () => void): () => void;
}
