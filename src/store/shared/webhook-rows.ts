import { DEFAULT_DELIVERY_ORDERING, type DeliveryOrdering } from '../../domain/delivery-ordering.js';
import type { DeliveryStatus } from '../../domain/delivery-status.js';
import type { DeliveryTrigger } from '../../domain/delivery-trigger.js';
import type { DisabledReason } from '../../domain/disabled-reason.js';
import type { EventType, SentEventType } from '../../domain/event-types.js';
import { DEFAULT_OWNER } from '../../domain/owner.js';
import type { AttemptQuery, DeliveryAttemptRecord } from '../records.js';
import type {
  SigningSecrets,
  WebhookEndpointChange,
  WebhookEndpointRecord,
  WebhookEndpointSnapshot,
} from '../webhook-endpoint-records.js';
import { readQueries } from './keyset-page.js';
import type { ToDate } from './rows.js';
import type { Param } from './sql-params.js';

/** The webhook tables' rows and their records, for both backends (see rows.ts). */
export const ENDPOINT_COLUMNS =
  'id, owner, url, events, description, enabled, secret, previous_secret, previous_secret_expires_at, created_at, ' +
  'disabled_reason, disabled_at, paused_until, ordering, public_key, previous_public_key, rate_limit';
const ATTEMPT_COLUMNS =
  'id, event_seq, type, attempt, status, response_status, error, attempted_at, next_attempt_at, triggered_by, ' +
  'waiting_for, duration_ms, response_body, response_body_truncated';

/** The deliveries log's filters, and the columns each compares. */
const ATTEMPT_FILTERS = { all: [], status: ['status'], event: ['event_seq'], both: ['status', 'event_seq'] } as const;
export type AttemptFilter = keyof typeof ATTEMPT_FILTERS;

/**
 * A page statement per combination of filters rather than one with `(? IS NULL OR …)`, so each is served by
 * an index on the endpoint and what it filters, and reads only the entries it returns. Newest first.
 */
export function attemptsQueries(param: Param): Record<AttemptFilter, string> {
  const entries = Object.entries(ATTEMPT_FILTERS).map(([filter, columns]) => {
    const equal = ['endpoint_id', ...columns].map((column, i) => `${column} = ${param(i + 1)}`).join(' AND ');
    const n = columns.length + 1;
    const text = `SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE ${equal} AND id < ${param(n + 1)}
      ORDER BY id DESC LIMIT ${param(n + 2)}`;
    return [filter, text];
  });
  return Object.fromEntries(entries) as Record<AttemptFilter, string>;
}

/** Which of attemptsQueries serves a query, with its parameters in order. */
export function attemptsStatement(endpointId: number, query: AttemptQuery) {
  const { status, eventSeq } = query;
  const filter: AttemptFilter =
    status === undefined ? (eventSeq === undefined ? 'all' : 'event') : eventSeq === undefined ? 'status' : 'both';
  const filters = [status, eventSeq].filter((value) => value !== undefined);
  return { filter, values: [endpointId, ...filters, query.beforeId ?? Number.MAX_SAFE_INTEGER, query.limit] };
}

/** The statements alike on both backends, in each one's parameter syntax (writes differ in their casts). */
export function webhookQueries(param: Param) {
  const { get, page } = readQueries('webhook_endpoints', ENDPOINT_COLUMNS, param);
  return {
    get,
    page,
    // Its deliveries go with it (ON DELETE CASCADE; on SQLite foreign_keys is on); its log, by removeLog.
    remove: `DELETE FROM webhook_endpoints WHERE id = ${param(1)}`,
    // The log has no foreign key (it outlives deliveries): the endpoint's removal takes it, in the same write.
    removeLog: `DELETE FROM webhook_attempts WHERE endpoint_id = ${param(1)}`,
  };
}

/** `events` is kept as comma-separated types: fan-out matches an event's type against it. */
export const eventsColumn = (events: readonly EventType[]) => events.join(',');

/**
 * The parameters of both backends' one update statement, by name: url, events, enabled and ordering (null
 * keeps the column); whether to set description and its value (a flag of its own, since null clears it); a
 * change of signature's secret, public key and overlap (a null secret keeps them: rotationSet); whether to
 * set the rate limit and its value (null clears it).
 */
export function changeValues(change: WebhookEndpointChange) {
  return {
    url: change.url ?? null,
    events: change.events === undefined ? null : eventsColumn(change.events),
    enabled: change.enabled ?? null,
    setDescription: change.description !== undefined,
    description: change.description ?? null,
    ordering: change.ordering ?? null,
    secret: change.signingKey?.secret ?? null,
    publicKey: change.signingKey?.publicKey ?? null,
    expiresAt: change.signingKey?.previousExpiresAt ?? null,
    setRateLimit: change.rateLimit !== undefined,
    rateLimit: change.rateLimit ?? null,
  };
}

/** A rotation's parameters in a backend's syntax, and the condition it is made under. */
interface RotationSql {
  readonly when: string;
  readonly secret: string;
  readonly publicKey: string;
  readonly expiresAt: string;
}

/**
 * A rotation's assignments, for the rotation itself (`when` always) and for a change of signature (`when` the
 * new secret's kind differs from the endpoint's: one with a public key is Ed25519, src/domain/webhook-signature.ts).
 * The right-hand columns are the row's before the update: the secret and public key replaced become the previous
 * ones while `expiresAt` is set, dropping any older: two secrets at most sign at once.
 */
export function rotationSet({ when, secret, publicKey, expiresAt }: RotationSql): string {
  const set = (column: string, value: string) => `${column} = CASE WHEN ${when} THEN ${value} ELSE ${column} END`;
  return [
    set('secret', secret),
    set('public_key', publicKey),
    set('previous_secret', `CASE WHEN ${expiresAt} IS NULL THEN NULL ELSE secret END`),
    set('previous_public_key', `CASE WHEN ${expiresAt} IS NULL THEN NULL ELSE public_key END`),
    set('previous_secret_expires_at', expiresAt),
  ].join(',\n    ');
}

/** A change of signature's condition: a new secret, of the kind the endpoint has not. */
export const otherKind = (secret: string, publicKey: string) =>
  `${secret} IS NOT NULL AND (public_key IS NULL) = (${publicKey} IS NOT NULL)`;

/** An update's `enabled` in a backend's syntax: true, false (each false when it is kept), and the row's own. */
interface EnabledSql {
  readonly on: string;
  readonly off: string;
  readonly was: string;
}

/**
 * What an update's `enabled` does to the health columns: disabling an enabled endpoint is a manual disable
 * at `now`; enabling clears why and when, and an endpoint enabled again starts its failing anew.
 */
export function enabledChange({ on, off, was }: EnabledSql, now: string): string {
  return `disabled_reason = CASE WHEN ${on} THEN NULL WHEN ${off} AND ${was} THEN 'manual' ELSE disabled_reason END,
    disabled_at = CASE WHEN ${on} THEN NULL WHEN ${off} AND ${was} THEN ${now} ELSE disabled_at END,
    failing_since = CASE WHEN ${on} AND NOT (${was}) THEN NULL ELSE failing_since END`;
}

/** The signing secrets of the endpoints whose ids are in `ids` (a backend's list of them). */
export const secretsOf = (ids: string) =>
  `SELECT id, secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id IN (${ids})`;

/** The secrets columns, which the endpoint's rows and a claimed delivery's both carry. */
export interface SecretsRow<D> {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: D | null;
}

export interface WebhookEndpointRow<D> extends SecretsRow<D> {
  id: number;
  /** Absent from the data of events recorded before owners existed: theirs is the default owner. */
  owner?: string;
  url: string;
  events: string;
  description: string | null;
  /** SQLite has no boolean: 0 or 1 there. */
  enabled: boolean | number;
  created_at: D;
  disabled_reason: DisabledReason | null;
  disabled_at: D | null;
  /** Absent from the data of events recorded before it was shown. */
  paused_until?: D | null;
  /** Absent from the data of events recorded before it existed: those endpoints were given the default. */
  ordering?: DeliveryOrdering;
  /** Absent from the data of events recorded before they existed: those endpoints signed with HMAC. */
  public_key?: string | null;
  previous_public_key?: string | null;
  /** Absent from the data of events recorded before it existed: those endpoints had none. */
  rate_limit?: number | null;
}

export interface DeliveryAttemptRow<D> {
  id: number;
  event_seq: number;
  type: SentEventType;
  attempt: number;
  status: DeliveryStatus;
  response_status: number | null;
  error: string | null;
  attempted_at: D;
  next_attempt_at: D | null;
  triggered_by: DeliveryTrigger;
  waiting_for: number | null;
  duration_ms: number | null;
  response_body: string | null;
  /** SQLite has no boolean: 0 or 1 there; null on entries that kept no body. */
  response_body_truncated: boolean | number | null;
}

/** An endpoint's row as an event about it keeps it (the events table's `data`): every column but the secrets. */
export type EndpointEventRow<D> = Omit<WebhookEndpointRow<D>, 'secret' | 'previous_secret'>;

export function endpointEventRow<D>(row: WebhookEndpointRow<D>): EndpointEventRow<D> {
  const { secret: _secret, previous_secret: _previous, ...shown } = row;
  return shown;
}

/** The fields of an endpoint that anyone may see. */
function shownFromRow<D>(row: EndpointEventRow<D>, toDate: ToDate<D>) {
  return {
    id: row.id,
    owner: row.owner ?? DEFAULT_OWNER,
    url: row.url,
    events: row.events.split(',') as EventType[],
    description: row.description,
    enabled: Boolean(row.enabled),
    createdAt: toDate(row.created_at),
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at === null ? null : toDate(row.disabled_at),
    pausedUntil: row.paused_until == null ? null : toDate(row.paused_until),
    ordering: row.ordering ?? DEFAULT_DELIVERY_ORDERING,
    publicKey: row.public_key ?? null,
    previousPublicKey: row.previous_public_key ?? null,
    rateLimit: row.rate_limit ?? null,
  };
}

export function endpointFromRow<D>(row: WebhookEndpointRow<D>, toDate: ToDate<D>): WebhookEndpointRecord {
  return { ...shownFromRow(row, toDate), ...secretsFromRow(row, toDate) };
}

export function snapshotFromRow<D>(row: EndpointEventRow<D>, toDate: ToDate<D>): WebhookEndpointSnapshot {
  const expiresAt = row.previous_secret_expires_at;
  return { ...shownFromRow(row, toDate), previousSecretExpiresAt: expiresAt === null ? null : toDate(expiresAt) };
}

export function secretsFromRow<D>(row: SecretsRow<D>, toDate: ToDate<D>): SigningSecrets {
  const { previous_secret: secret, previous_secret_expires_at: expiresAt } = row;
  return {
    secret: row.secret,
    previousSecret: secret === null || expiresAt === null ? null : { secret, expiresAt: toDate(expiresAt) },
  };
}

export function attemptFromRow<D>(row: DeliveryAttemptRow<D>, toDate: ToDate<D>): DeliveryAttemptRecord {
  return {
    id: row.id,
    eventSeq: row.event_seq,
    type: row.type,
    attempt: row.attempt,
    status: row.status,
    responseStatus: row.response_status,
    error: row.error,
    durationMs: row.duration_ms,
    responseBody: row.response_body,
    responseBodyTruncated: Boolean(row.response_body_truncated),
    attemptedAt: toDate(row.attempted_at),
    nextAttemptAt: row.next_attempt_at === null ? null : toDate(row.next_attempt_at),
    trigger: row.triggered_by,
    waitingFor: row.waiting_for,
  };
}
