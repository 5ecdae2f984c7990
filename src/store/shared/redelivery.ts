import type { SentEventType } from '../../domain/event-types.js';
import type { RecoverResult, ResendResult } from '../redelivery-records.js';

/**
 * What a resend finds before it queues, as both backends read it: the endpoint (null: none) and whether it
 * is enabled, the event's type (null: not kept, or not the caller's owner's to see), whether the endpoint
 * subscribes to it, and whether fan-out still owes it to the endpoint (enabled, its position before the
 * event): then it is as good as pending, and a row queued now would be queued twice.
 */
export interface ResendFacts {
  readonly endpoint: number | null;
  readonly enabled: boolean | number | null;
  readonly type: SentEventType | null;
  readonly subscribed: boolean | number | null;
  readonly owed: boolean | number | null;
}

/** Whether the resend may queue; else its answer. */
export function resendRefusal(facts: ResendFacts): ResendResult | undefined {
  if (facts.endpoint === null) return { outcome: 'endpoint_not_found' };
  if (facts.type === null) return { outcome: 'event_not_found' };
  if (!facts.subscribed) return { outcome: 'not_subscribed', type: facts.type };
  if (facts.owed) return { outcome: 'pending', enabled: Boolean(facts.enabled) };
  return undefined;
}

/**
 * A resend's upsert, alike on both backends: `rows` (event_seq, endpoint_id, status, next_attempt_at,
 * triggered_by) makes a new pending delivery, or the existing one pending again from its first attempt,
 * unless it is pending already (then no row changes).
 */
export const resendUpsert = (rows: string) =>
  `INSERT INTO webhook_deliveries AS d (event_seq, endpoint_id, status, next_attempt_at, triggered_by) ${rows}
    ON CONFLICT (event_seq, endpoint_id) DO UPDATE SET status = 'pending', attempts = 0,
      next_attempt_at = excluded.next_attempt_at, claimed_until = NULL, triggered_by = 'resend'
    WHERE d.status <> 'pending'`;

/** Rows a recovery queues per write: each write is short, and API writes go between them. */
export const RECOVER_PER_WRITE = 500;

/**
 * One write of a recovery: how many it queued, the last event it looked at (null: none was left), and
 * whether the endpoint is enabled (null: it does not exist).
 */
export interface RecoverStep {
  readonly queued: number;
  readonly last: number | null;
  readonly enabled: boolean | number | null;
}

/**
 * A recovery in writes of RECOVER_PER_WRITE: each takes the next failed deliveries by event after the
 * last one looked at, so it ends, and one queued meanwhile by another call is passed over, not counted.
 * The endpoint's state is as the last write saw it; undefined when it does not exist (then none matched).
 */
export async function recoverInSteps(
  step: (after: number) => Promise<RecoverStep>,
): Promise<RecoverResult | undefined> {
  let queued = 0;
  let after = 0;
  for (;;) {
    const done = await step(after);
    queued += done.queued;
    if (done.last === null) return done.enabled === null ? undefined : { queued, enabled: Boolean(done.enabled) };
    after = done.last;
  }
}

/**
 * The next failed deliveries of the endpoint whose events lie in [since, until), by event, after `after`:
 * through webhook_deliveries_endpoint (endpoint, status, event_seq). Parameters in the backend's syntax.
 */
export const failedInWindow = (p: { endpoint: string; after: string; since: string; until: string; limit: string }) =>
  `SELECT d.id, d.event_seq, e.at FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
    WHERE d.endpoint_id = ${p.endpoint} AND d.status = 'failed' AND d.event_seq > ${p.after}
      AND e.at >= ${p.since} AND e.at < ${p.until}
    ORDER BY d.event_seq LIMIT ${p.limit}`;
