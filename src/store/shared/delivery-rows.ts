import type { AttemptOutcome, DueDelivery } from '../records.js';
import { type SentEventRow, sentEventFromRow } from './event-rows.js';
import type { ToDate } from './rows.js';
import { type SecretsRow, secretsFromRow } from './webhook-rows.js';

/** SQL fragments in a backend's syntax: the endpoint, the time and the most rows to take. */
export interface DueSql {
  readonly endpoint: string;
  readonly now: string;
  readonly limit: string;
  /** True when the endpoint's deliveries are ordered by subject (its `ordering` is 'subject'). */
  readonly ordered: string;
}

/**
 * The event seqs of the deliveries that the delivery `d` waits for when its endpoint orders by subject
 * (docs/decisions/events-in-order.md): the earlier events of its subject still pending to the same endpoint,
 * in flight or waiting for a retry. Only deliveries of recorded events wait and are waited for: a resend, a
 * recovery or a test send goes when asked, and holds nothing back. Read through webhook_deliveries_subject.
 */
export const earlierOfSubject = (d: string) => `SELECT b.event_seq FROM webhook_deliveries b
  WHERE b.endpoint_id = ${d}.endpoint_id AND b.subject = ${d}.subject AND b.status = 'pending'
    AND b.triggered_by = 'event' AND b.event_seq < ${d}.event_seq`;

/**
 * One endpoint's deliveries a claim may take, oldest due first: pending, due, unclaimed (or their claim ran
 * out), and, when the endpoint orders by subject, first of their subject still pending (earlierOfSubject).
 * Walks webhook_deliveries_due from the endpoint's oldest due, so it reads what it returns plus the
 * endpoint's deliveries claimed right now (in flight: a few) and those waiting behind an earlier event of
 * their subject, never the rest of its backlog.
 */
export function dueOfEndpoint(sql: DueSql): string {
  return `SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
    WHERE d.endpoint_id = ${sql.endpoint} AND d.status = 'pending' AND d.next_attempt_at <= ${sql.now}
      AND (d.claimed_until IS NULL OR d.claimed_until < ${sql.now})
      AND (d.subject IS NULL OR d.triggered_by <> 'event' OR NOT ${sql.ordered}
        OR NOT EXISTS (${earlierOfSubject('d')}))
    ORDER BY d.next_attempt_at, d.id LIMIT ${sql.limit}`;
}

/**
 * An endpoint's test sends not tried yet, oldest first, at most `limit`: what a claim takes of an endpoint
 * paused by a Retry-After (a test send checks the endpoint now; a retry of it waits like the others), read
 * through the partial index webhook_deliveries_first_test, not through the backlog the pause holds.
 */
export function firstTestsOfEndpoint(sql: Omit<DueSql, 'ordered'>): string {
  return `SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
    WHERE d.endpoint_id = ${sql.endpoint} AND d.status = 'pending' AND d.triggered_by = 'test' AND d.attempts = 0
      AND (d.claimed_until IS NULL OR d.claimed_until < ${sql.now})
    ORDER BY d.id LIMIT ${sql.limit}`;
}

/** SQL over an endpoint `w`: its events not queued yet (fan-out follows the commit). */
export interface UnqueuedSql {
  /** How many there are, about: by position, so events of other types count until fan-out passes them. */
  readonly count: string;
  /** The seq of the first one. */
  readonly first: string;
}

/**
 * Pending deliveries to enabled endpoints, and the time of the oldest one's event, through
 * webhook_deliveries_endpoint per endpoint (the endpoints are few): a count of its pending entries, and
 * each endpoint's first pending event by seq (the order events were inserted in: near enough for an
 * age), not a join of every pending delivery to its event. An endpoint's events not queued yet
 * (`unqueued`) count as pending too; they all come after its queued ones, so the first of them is its
 * oldest only when nothing is queued.
 */
export function deliveryStatsQuery(enabled: string, unqueued: UnqueuedSql): string {
  const firstQueued = `(SELECT d.event_seq FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'pending'
          ORDER BY d.event_seq LIMIT 1)`;
  return `SELECT CAST(coalesce(sum(p.pending), 0) AS INTEGER) AS pending, min(e.at) AS oldest FROM (
      SELECT
        (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'pending')
          + (${unqueued.count}) AS pending,
        coalesce(${firstQueued}, (${unqueued.first})) AS oldest_seq
      FROM webhook_endpoints w WHERE ${enabled}
    ) p LEFT JOIN events e ON e.seq = p.oldest_seq`;
}

/** A claimed delivery's row: the delivery, its endpoint and its event (in the events table's columns). */
export interface DueDeliveryRow<D> extends SentEventRow<D>, SecretsRow<D> {
  delivery_id: number;
  attempts: number;
  endpoint_id: number;
  owner: string;
  url: string;
  rate_limit: number | null;
  /** The trace its event's change was made in (null: none recorded). */
  trace: string | null;
}

export function dueFromRow<D>(row: DueDeliveryRow<D>, claimedUntil: Date, toDate: ToDate<D>): DueDelivery {
  return {
    id: row.delivery_id,
    attempt: row.attempts + 1,
    claimedUntil,
    endpoint: {
      id: row.endpoint_id,
      owner: row.owner,
      url: row.url,
      rateLimit: row.rate_limit,
      ...secretsFromRow(row, toDate),
    },
    event: sentEventFromRow(row, toDate),
    trace: row.trace,
  };
}

/**
 * The delivery's count of attempts once `outcome` is recorded: one more, unless a stop cut the attempt off,
 * which leaves the retry schedule where it was (the next is made under the same number).
 */
export function attemptsAfter(outcome: AttemptOutcome): number {
  return outcome.stopped ? outcome.delivery.attempt - 1 : outcome.delivery.attempt;
}

/**
 * An attempt's answer columns (duration_ms, response_body, response_body_truncated): the flag is null, as
 * the body is, when no body was kept.
 */
export function answerValues(outcome: AttemptOutcome): [number | null, string | null, boolean | null] {
  const body = outcome.responseBody ?? null;
  return [outcome.durationMs ?? null, body, body === null ? null : outcome.responseBodyTruncated === true];
}

/** The free slots as a JSON object by endpoint id, which SQL reads once per endpoint. */
export const freeJson = (free: ReadonlyMap<number, number>) => JSON.stringify(Object.fromEntries(free));
