import type Database from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit.js';
import type { AttemptQuery, DeliveryAttemptRecord } from '../records.js';
import { endpointChanged, endpointCreated, endpointDeleted, endpointRotated } from '../shared/endpoint-audit.js';
import { fromMilliseconds } from '../shared/rows.js';
import { sqliteParam } from '../shared/sql-params.js';
import {
  type AttemptFilter,
  attemptFromRow,
  attemptsQueries,
  attemptsStatement,
  changeValues,
  type DeliveryAttemptRow,
  ENDPOINT_COLUMNS,
  enabledChange,
  endpointFromRow,
  eventsColumn,
  otherKind,
  rotationSet,
  type WebhookEndpointRow,
  webhookQueries,
} from '../shared/webhook-rows.js';
import type { WebhookStore } from '../store.js';
import type {
  EndpointPageQuery,
  NewWebhookEndpointRecord,
  SecretRotation,
  WebhookEndpointChange,
  WebhookEndpointRecord,
} from '../webhook-endpoint-records.js';
import type { SqliteAuditLog } from './audit-log.js';
import { EVENTS_HEAD, type SqliteFanOut } from './fan-out.js';
import type { GroupCommit } from './group-commit.js';

type Row = WebhookEndpointRow<number>;
type SqlValue = string | number | null;

const fromRow = (row: Row) => endpointFromRow(row, fromMilliseconds);
const recordOrNone = (row: Row | undefined) => (row === undefined ? undefined : fromRow(row));
/** SQLite binds no booleans, and keeps times as milliseconds. */
const bindable = (value: string | number | boolean | Date | null): SqlValue =>
  typeof value === 'boolean' ? Number(value) : value instanceof Date ? value.getTime() : value;

const QUERIES = {
  // Sent only what is recorded from now on (fan-out.ts).
  // At the owner's bound it inserts nothing: one writer at a time, so the count is the one it adds to.
  insert: `INSERT INTO webhook_endpoints
      (owner, url, events, description, ordering, rate_limit, enabled, secret, public_key, created_at, fanned_seq)
    SELECT @owner, @url, @events, @description, @ordering, @rateLimit, 1, @secret, @publicKey, @createdAt, ${EVENTS_HEAD}
    WHERE (SELECT count(*) FROM webhook_endpoints WHERE owner = @owner) < @perOwner
    RETURNING ${ENDPOINT_COLUMNS}`,
  ownerPage: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE owner = ? AND id > ? ORDER BY id LIMIT ?`,
  update: `UPDATE webhook_endpoints SET url = coalesce(@url, url), events = coalesce(@events, events),
    enabled = coalesce(@enabled, enabled), description = CASE WHEN @setDescription THEN @description ELSE description END,
    ordering = coalesce(@ordering, ordering),
    rate_limit = CASE WHEN @setRateLimit THEN @rateLimit ELSE rate_limit END,
    ${rotationSet({ when: otherKind('@secret', '@publicKey'), secret: '@secret', publicKey: '@publicKey', expiresAt: '@expiresAt' })},
    ${enabledChange({ on: '@enabled = 1', off: '@enabled = 0', was: 'enabled = 1' }, '@now')}
    WHERE id = @id RETURNING ${ENDPOINT_COLUMNS}`,
  // Before an update enables a disabled endpoint: what waited for it is due at once.
  resume: `UPDATE webhook_deliveries SET next_attempt_at = min(next_attempt_at, @now)
    WHERE status = 'pending' AND endpoint_id = (SELECT id FROM webhook_endpoints WHERE id = @id AND enabled = 0)`,
  rotate: `UPDATE webhook_endpoints
    SET ${rotationSet({ when: 'TRUE', secret: '@secret', publicKey: '@publicKey', expiresAt: '@expiresAt' })}
    WHERE id = @id RETURNING ${ENDPOINT_COLUMNS}`,
  ...webhookQueries(sqliteParam),
};

/**
 * Webhook endpoints and their deliveries log on SQLite; writes go through the group commit, each with its
 * audit entry, from the row as it was (read in the same write) and as it is.
 */
export class SqliteWebhookStore implements WebhookStore {
  readonly #writes: GroupCommit;
  readonly #fanOut: SqliteFanOut;
  readonly #audit: SqliteAuditLog;
  readonly #insert: Database.Statement<[Record<string, SqlValue>], Row>;
  readonly #get: Database.Statement<[number], Row>;
  readonly #page: Database.Statement<[number, number], Row>;
  readonly #ownerPage: Database.Statement<[string, number, number], Row>;
  readonly #update: Database.Statement<[Record<string, SqlValue>], Row>;
  readonly #resume: Database.Statement<[{ id: number; now: number }]>;
  readonly #rotate: Database.Statement<[Record<string, SqlValue>], Row>;
  readonly #remove: Database.Statement<[number]>;
  readonly #removeLog: Database.Statement<[number]>;
  readonly #attempts: Record<AttemptFilter, Database.Statement<SqlValue[], DeliveryAttemptRow<number>>>;

  constructor(db: Database.Database, writes: GroupCommit, fanOut: SqliteFanOut, audit: SqliteAuditLog) {
    this.#writes = writes;
    this.#fanOut = fanOut;
    this.#audit = audit;
    this.#insert = db.prepare(QUERIES.insert);
    this.#get = db.prepare(QUERIES.get);
    this.#page = db.prepare(QUERIES.page);
    this.#ownerPage = db.prepare(QUERIES.ownerPage);
    this.#update = db.prepare(QUERIES.update);
    this.#resume = db.prepare(QUERIES.resume);
    this.#rotate = db.prepare(QUERIES.rotate);
    this.#remove = db.prepare(QUERIES.remove);
    this.#removeLog = db.prepare(QUERIES.removeLog);
    const attempts = Object.entries(attemptsQueries(sqliteParam)).map(([filter, text]) => [filter, db.prepare(text)]);
    this.#attempts = Object.fromEntries(attempts);
  }

  create(
    endpoint: NewWebhookEndpointRecord,
    perOwner: number,
    audit: AuditContext,
  ): Promise<WebhookEndpointRecord | undefined> {
    const values = {
      owner: endpoint.owner,
      url: endpoint.url,
      events: eventsColumn(endpoint.events),
      description: endpoint.description,
      ordering: endpoint.ordering,
      rateLimit: endpoint.rateLimit,
      secret: endpoint.secret,
      publicKey: endpoint.publicKey,
      createdAt: endpoint.createdAt.getTime(),
      perOwner,
    };
    return this.#writes.run(() => {
      const row = this.#insert.get(values);
      if (row !== undefined) this.#audit.write(endpointCreated(row, fromMilliseconds, audit));
      return recordOrNone(row);
    });
  }

  async get(id: number): Promise<WebhookEndpointRecord | undefined> {
    return recordOrNone(this.#get.get(id));
  }

  async list(query: EndpointPageQuery): Promise<WebhookEndpointRecord[]> {
    const afterId = query.afterId ?? 0;
    const rows =
      query.owner === undefined
        ? this.#page.all(afterId, query.limit)
        : this.#ownerPage.all(query.owner, afterId, query.limit);
    return rows.map(fromRow);
  }

  update(id: number, change: WebhookEndpointChange, audit: AuditContext): Promise<WebhookEndpointRecord | undefined> {
    const changed = Object.entries(changeValues(change)).map(([name, value]) => [name, bindable(value)]);
    const subscriptionChanges = change.events !== undefined || change.enabled !== undefined;
    return this.#writes.run(() => {
      const before = this.#get.get(id);
      if (before === undefined) return undefined;
      const now = Date.now();
      if (subscriptionChanges) this.#fanOut.settle(id);
      if (change.enabled === true) this.#resume.run({ id, now });
      const after = this.#update.get({ ...Object.fromEntries(changed), now, id }) as Row;
      const entry = endpointChanged(before, after, fromMilliseconds, audit);
      if (entry !== undefined) this.#audit.write(entry);
      return fromRow(after);
    });
  }

  rotateSecret(id: number, rotation: SecretRotation, audit: AuditContext): Promise<WebhookEndpointRecord | undefined> {
    const { secret, publicKey } = rotation;
    const values = { id, secret, publicKey, expiresAt: rotation.previousExpiresAt?.getTime() ?? null };
    return this.#writes.run(() => {
      const before = this.#get.get(id);
      if (before === undefined) return undefined;
      const after = this.#rotate.get(values) as Row;
      this.#audit.write(endpointRotated(before, after, fromMilliseconds, audit));
      return fromRow(after);
    });
  }

  remove(id: number, audit: AuditContext): Promise<boolean> {
    return this.#writes.run(() => {
      const before = this.#get.get(id);
      if (before === undefined) return false;
      this.#removeLog.run(id);
      this.#remove.run(id);
      this.#audit.write(endpointDeleted(before, fromMilliseconds, audit));
      return true;
    });
  }

  async attempts(endpointId: number, query: AttemptQuery): Promise<DeliveryAttemptRecord[]> {
    const { filter, values } = attemptsStatement(endpointId, query);
    return this.#attempts[filter].all(...values).map((row) => attemptFromRow(row, fromMilliseconds));
  }
}
