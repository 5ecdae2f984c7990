import type pg from 'pg';
import type { AuditContext } from '../../domain/audit.js';
import type { AttemptQuery, DeliveryAttemptRecord } from '../records.js';
import { endpointChanged, endpointCreated, endpointDeleted, endpointRotated } from '../shared/endpoint-audit.js';
import { asDate } from '../shared/rows.js';
import { postgresParam } from '../shared/sql-params.js';
import {
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
import { lockKey } from './advisory-locks.js';
import { recordAudit } from './audit-log.js';
import type { PostgresFanOut } from './fan-out.js';
import type { Database } from './postgres-db.js';

type Row = WebhookEndpointRow<Date>;

const fromRow = (row: Row) => endpointFromRow(row, asDate);

type ChangeName = keyof ReturnType<typeof changeValues>;
/** The update's positional parameters: every one of changeValues', in the order it gives them, then the id. */
const CHANGE_ORDER = Object.keys(changeValues({})) as ChangeName[];
const changeParam = (name: ChangeName) => `$${CHANGE_ORDER.indexOf(name) + 1}`;

const QUERIES = {
  // As pets' inserts: the lock, held to commit, makes endpoints visible in id order, so pages skip none.
  // The fan-out position's default starts it at what is recorded from now on (migration 5).
  // Its own statement after the lock (insert): a statement's snapshot is taken before it waits, so a count in
  // the locking statement could miss an insert that committed meanwhile, and owners racing could pass the bound.
  inIdOrder: `SELECT pg_advisory_xact_lock(${lockKey('webhook-endpoint-ids')})`,
  insert: `INSERT INTO webhook_endpoints
      (owner, url, events, description, ordering, enabled, secret, public_key, created_at, rate_limit)
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text, true, $6::text, $9::text, $7::timestamptz, $10::integer
    WHERE (SELECT count(*) FROM webhook_endpoints WHERE owner = $1::text) < $8::bigint
    RETURNING ${ENDPOINT_COLUMNS}`,
  ownerPage: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE owner = $1 AND id > $2 ORDER BY id LIMIT $3`,
  update: `UPDATE webhook_endpoints SET url = coalesce(${changeParam('url')}::text, url),
    events = coalesce(${changeParam('events')}::text, events), enabled = coalesce(${changeParam('enabled')}::boolean, enabled),
    description = CASE WHEN ${changeParam('setDescription')}::boolean THEN ${changeParam('description')}::text ELSE description END,
    ordering = coalesce(${changeParam('ordering')}::text, ordering),
    rate_limit = CASE WHEN ${changeParam('setRateLimit')}::boolean THEN ${changeParam('rateLimit')}::integer ELSE rate_limit END,
    ${rotationSet({
      when: otherKind(`${changeParam('secret')}::text`, `${changeParam('publicKey')}::text`),
      secret: `${changeParam('secret')}::text`,
      publicKey: `${changeParam('publicKey')}::text`,
      expiresAt: `${changeParam('expiresAt')}::timestamptz`,
    })},
    ${enabledChange({ on: `${changeParam('enabled')}::boolean`, off: `NOT ${changeParam('enabled')}::boolean`, was: 'enabled' }, 'now()')}
    WHERE id = $${CHANGE_ORDER.length + 1} RETURNING ${ENDPOINT_COLUMNS}`,
  // Before an update enables a disabled endpoint (locked by the settle): what waited for it is due at once.
  resume: `UPDATE webhook_deliveries SET next_attempt_at = least(next_attempt_at, now())
    WHERE status = 'pending' AND endpoint_id = (SELECT id FROM webhook_endpoints WHERE id = $1 AND NOT enabled)`,
  // A concurrent rotation waits for the row's lock and then replaces this one's secret, so two sign at most.
  rotate: `UPDATE webhook_endpoints
    SET ${rotationSet({ when: 'TRUE', secret: '$2::text', publicKey: '$4::text', expiresAt: '$3::timestamptz' })}
    WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
  // The row as it was, held until the change commits: what its audit entry compares the change with.
  before: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 FOR UPDATE`,
  ...webhookQueries(postgresParam),
};
const ATTEMPTS = attemptsQueries(postgresParam);
const REMOVE = `WITH log AS (${QUERIES.removeLog}) ${QUERIES.remove} RETURNING ${ENDPOINT_COLUMNS}`;
/**
 * A change is SQL alone, so a deadlock's victim (a change meeting an attempt of the endpoint being recorded)
 * runs again rather than answering 500, as the single statements they were before the audit log did.
 */
const RERUN = { rerunDeadlock: true } as const;

/**
 * Webhook endpoints and their deliveries log on PostgreSQL. Each change is a transaction that locks the row
 * as it was, changes it (a change of subscription settles the old one first: fan-out.ts) and writes its
 * audit entry.
 */
export class PostgresWebhookStore implements WebhookStore {
  readonly #db: Database;
  readonly #fanOut: PostgresFanOut;

  constructor(db: Database, fanOut: PostgresFanOut) {
    this.#db = db;
    this.#fanOut = fanOut;
  }

  async create(
    endpoint: NewWebhookEndpointRecord,
    perOwner: number,
    audit: AuditContext,
  ): Promise<WebhookEndpointRecord | undefined> {
    const values = [
      endpoint.owner,
      endpoint.url,
      eventsColumn(endpoint.events),
      endpoint.description,
      endpoint.ordering,
      endpoint.secret,
      endpoint.createdAt,
      perOwner,
      endpoint.publicKey,
      endpoint.rateLimit,
    ];
    const row = await this.#db.transaction(async (client) => {
      await client.query({ name: 'webhooks-in-id-order', text: QUERIES.inIdOrder });
      const [created] = (await client.query<Row>({ name: 'webhooks-insert', text: QUERIES.insert, values })).rows;
      if (created !== undefined) await recordAudit(client, endpointCreated(created, asDate, audit));
      return created;
    }, RERUN);
    this.#fanOut.endpointsChanged();
    return row === undefined ? undefined : fromRow(row);
  }

  async get(id: number): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await this.#db.rows<Row>('webhooks-get', QUERIES.get, [id]);
    return row === undefined ? undefined : fromRow(row);
  }

  async list(query: EndpointPageQuery): Promise<WebhookEndpointRecord[]> {
    const afterId = query.afterId ?? 0;
    const rows =
      query.owner === undefined
        ? await this.#db.rows<Row>('webhooks-page', QUERIES.page, [afterId, query.limit])
        : await this.#db.rows<Row>('webhooks-owner-page', QUERIES.ownerPage, [query.owner, afterId, query.limit]);
    return rows.map(fromRow);
  }

  async update(
    id: number,
    change: WebhookEndpointChange,
    audit: AuditContext,
  ): Promise<WebhookEndpointRecord | undefined> {
    const named = changeValues(change);
    const values = [...CHANGE_ORDER.map((name) => named[name]), id];
    const subscriptionChanges = change.events !== undefined || change.enabled !== undefined;
    if (subscriptionChanges) await this.#fanOut.waitForOlder();
    const row = await this.#change(id, async (client, before) => {
      if (subscriptionChanges) {
        await this.#fanOut.settle(client, id);
        if (change.enabled === true)
          await client.query({ name: 'webhooks-resume', text: QUERIES.resume, values: [id] });
      }
      const after = (await client.query<Row>({ name: 'webhooks-update', text: QUERIES.update, values })).rows[0] as Row;
      await recordAudit(client, endpointChanged(before, after, asDate, audit));
      return after;
    });
    if (subscriptionChanges) this.#fanOut.endpointsChanged();
    return row === undefined ? undefined : fromRow(row);
  }

  async rotateSecret(
    id: number,
    rotation: SecretRotation,
    audit: AuditContext,
  ): Promise<WebhookEndpointRecord | undefined> {
    const values = [id, rotation.secret, rotation.previousExpiresAt, rotation.publicKey];
    const row = await this.#change(id, async (client, before) => {
      const after = (await client.query<Row>({ name: 'webhooks-rotate', text: QUERIES.rotate, values })).rows[0] as Row;
      await recordAudit(client, endpointRotated(before, after, asDate, audit));
      return after;
    });
    return row === undefined ? undefined : fromRow(row);
  }

  async remove(id: number, audit: AuditContext): Promise<boolean> {
    return this.#db.transaction(async (client) => {
      const [removed] = (await client.query<Row>({ name: 'webhooks-remove', text: REMOVE, values: [id] })).rows;
      if (removed === undefined) return false;
      await recordAudit(client, endpointDeleted(removed, asDate, audit));
      return true;
    }, RERUN);
  }

  /** Runs `work` on the endpoint's row as it was, locked, in one transaction; undefined when there is none. */
  #change(id: number, work: (client: pg.PoolClient, before: Row) => Promise<Row>): Promise<Row | undefined> {
    return this.#db.transaction(async (client) => {
      const [before] = (await client.query<Row>({ name: 'webhooks-before', text: QUERIES.before, values: [id] })).rows;
      return before === undefined ? undefined : work(client, before);
    }, RERUN);
  }

  async attempts(endpointId: number, query: AttemptQuery): Promise<DeliveryAttemptRecord[]> {
    const { filter, values } = attemptsStatement(endpointId, query);
    const rows = await this.#db.rows<DeliveryAttemptRow<Date>>(`webhooks-attempts-${filter}`, ATTEMPTS[filter], values);
    return rows.map((row) => attemptFromRow(row, asDate));
  }
}
