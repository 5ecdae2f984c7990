import type { DueDelivery } from './delivery-store.js';
import { type EventRow, eventFromRow } from './event-rows.js';
import type { ToDate } from './rows.js';

/**
 * Due deliveries a claim looks at, oldest due first: bounds the work of one claim when a backlog waits
 * (an endpoint at its in-flight limit is skipped before this bound, so its backlog hides no other's).
 */
export const CLAIM_SCAN = 500;

/** SQL fragments in a backend's syntax: parameters, the in-flight count of `d.endpoint_id`, `w.enabled`. */
export interface DueSql {
  readonly now: string;
  readonly perEndpoint: string;
  readonly inFlight: string;
  readonly enabled: string;
}

/**
 * The deliveries a claim may take, one definition for both backends: due, pending, unclaimed (or their
 * claim ran out), to an enabled endpoint below its in-flight bound; each with its `slot`, its rank among
 * its endpoint's after what is in flight (a claim takes slot <= perEndpoint).
 */
export function dueDeliveries(sql: DueSql): string {
  return `SELECT d.id, d.next_attempt_at,
      row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) + ${sql.inFlight} AS slot
    FROM (
      SELECT d.id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d
      JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${sql.now}
        AND (d.claimed_until IS NULL OR d.claimed_until < ${sql.now})
        AND ${sql.enabled} AND ${sql.inFlight} < ${sql.perEndpoint}
      ORDER BY d.next_attempt_at LIMIT ${CLAIM_SCAN}
    ) d`;
}

/** A claimed delivery's row: the delivery, its endpoint and its event (in the events table's columns). */
export interface DueDeliveryRow<D> extends EventRow<D> {
  delivery_id: number;
  attempts: number;
  endpoint_id: number;
  url: string;
  secret: string;
}

export function dueFromRow<D>(row: DueDeliveryRow<D>, claimedUntil: Date, toDate: ToDate<D>): DueDelivery {
  return {
    id: row.delivery_id,
    attempt: row.attempts + 1,
    claimedUntil,
    endpoint: { id: row.endpoint_id, url: row.url, secret: row.secret },
    event: eventFromRow(row, toDate),
  };
}

/** The in-flight counts as a JSON object by endpoint id, which both backends' SQL reads per row. */
export const inFlightJson = (inFlight: ReadonlyMap<number, number>) => JSON.stringify(Object.fromEntries(inFlight));
