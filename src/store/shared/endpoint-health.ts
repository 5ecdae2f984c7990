import type { AttemptOutcome, AttemptRecorded } from '../records.js';
import { ENDPOINT_COLUMNS } from './webhook-rows.js';

/**
 * SQL fragments in a backend's syntax: one endpoint's failures (EndpointFailures), `now`, true, and the
 * assignment that records what fan-out owes the endpoint (fan-out.ts: up to the newest event it can see).
 */
interface FailuresSql {
  readonly endpoint: string;
  readonly failedAt: string;
  readonly pausedUntil: string;
  readonly gone: string;
  readonly since: string;
  readonly now: string;
  readonly enabled: string;
  readonly owe: string;
}

/**
 * The statements of an endpoint's health, over an endpoint's failures (`from`: a FROM clause that names
 * them, or none): a success ends its failing; a failure starts it (unless it failed since earlier), and a
 * wait asked for pauses the endpoint until then (unless it was paused until later); then an enabled
 * endpoint that answered 410, or has failed since `since` or earlier, is disabled, owed what fan-out has
 * not queued for it yet (it is queued, pending, for when it is enabled). That last one returns
 * the endpoints it disabled: its `enabled` condition, checked on the row it locks, makes it once.
 */
export function healthQueries(sql: FailuresSql, from = '') {
  const later = `(w.paused_until IS NULL OR ${sql.pausedUntil} > w.paused_until)`;
  return {
    failing: `UPDATE webhook_endpoints AS w SET failing_since = coalesce(w.failing_since, ${sql.failedAt}),
        paused_until = CASE WHEN ${later} AND ${sql.pausedUntil} IS NOT NULL THEN ${sql.pausedUntil}
          ELSE w.paused_until END ${from}
      WHERE w.id = ${sql.endpoint} AND ((w.failing_since IS NULL AND ${sql.failedAt} IS NOT NULL)
        OR (${later} AND ${sql.pausedUntil} IS NOT NULL))`,
    disable: `UPDATE webhook_endpoints AS w SET enabled = NOT ${sql.enabled},
        disabled_reason = CASE WHEN ${sql.gone} THEN 'gone' ELSE 'failing' END, disabled_at = ${sql.now},
        ${sql.owe} ${from}
      WHERE w.id = ${sql.endpoint} AND w.enabled = ${sql.enabled}
        AND (${sql.gone} OR w.failing_since <= ${sql.since})
      RETURNING ${ENDPOINT_COLUMNS}`,
  };
}

/**
 * One endpoint's failed attempts among those recorded together, after its last success among them, and
 * the latest wait any of them asked for (a success ends the failing, not the wait: it answered a request
 * sent before the one that asked).
 */
export interface EndpointFailures {
  readonly endpoint: number;
  /** The first of them: the endpoint fails since then, unless it failed since earlier; null when none. */
  readonly failedAt: Date | null;
  /** One of them answered 410 Gone. */
  readonly gone: boolean;
  /** The latest `disableIfFailingSince` among them; null when failing never disables. */
  readonly since: Date | null;
  /** The latest `pausedUntil` among all of the endpoint's attempts; null when none asked to wait. */
  readonly pausedUntil: Date | null;
}

/** Reasons the service disables an endpoint for. */
export type ServiceDisable = Exclude<AttemptRecorded, boolean>;

/** The endpoints with a success among the outcomes: their failing ends (a later failure starts it again). */
export function succeeded(outcomes: readonly AttemptOutcome[]): number[] {
  return [...new Set(outcomes.filter((o) => o.status === 'succeeded').map((o) => o.delivery.endpoint.id))];
}

const latest = (a: Date | null, b: Date | null) => (a === null || (b !== null && b > a) ? b : a);

/** Each endpoint's failures after its last success, in attempt order; by endpoint id (the order rows are locked in). */
export function failures(outcomes: readonly AttemptOutcome[]): EndpointFailures[] {
  const byEndpoint = new Map<number, EndpointFailures>();
  const inOrder = [...outcomes].sort((a, b) => a.attemptedAt.getTime() - b.attemptedAt.getTime());
  for (const outcome of inOrder) {
    // Cut off by a stop: no answer of the endpoint's to judge it by.
    if (outcome.stopped) continue;
    const endpoint = outcome.delivery.endpoint.id;
    const before = byEndpoint.get(endpoint);
    const pausedUntil = latest(before?.pausedUntil ?? null, outcome.pausedUntil ?? null);
    if (outcome.status === 'succeeded') {
      byEndpoint.set(endpoint, { endpoint, failedAt: null, gone: false, since: null, pausedUntil });
      continue;
    }
    byEndpoint.set(endpoint, {
      endpoint,
      failedAt: before?.failedAt ?? outcome.attemptedAt,
      gone: (before?.gone ?? false) || outcome.gone,
      since: latest(before?.since ?? null, outcome.disableIfFailingSince ?? null),
      pausedUntil,
    });
  }
  return [...byEndpoint.values()]
    .filter((f) => f.failedAt !== null || f.pausedUntil !== null)
    .sort((a, b) => a.endpoint - b.endpoint);
}

/**
 * What finish() answers for each outcome: whether it was recorded, and the reason its endpoint was disabled
 * on the first recorded outcome of each endpoint the write disabled (so each disable is counted once).
 */
export function answers(
  outcomes: readonly AttemptOutcome[],
  recorded: (outcome: AttemptOutcome) => boolean,
  disabled: ReadonlyMap<number, ServiceDisable>,
): AttemptRecorded[] {
  const told = new Set<number>();
  return outcomes.map((outcome) => {
    if (!recorded(outcome)) return false;
    const endpoint = outcome.delivery.endpoint.id;
    const reason = disabled.get(endpoint);
    if (reason === undefined || told.has(endpoint)) return true;
    told.add(endpoint);
    return reason;
  });
}
