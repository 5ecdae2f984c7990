import type Database from 'better-sqlite3';
import type { AttemptOutcome, AttemptRecorded } from '../records.js';
import { endpointDisabledByService } from '../shared/endpoint-audit.js';
import { answers, failures, healthQueries, type ServiceDisable, succeeded } from '../shared/endpoint-health.js';
import { fromMilliseconds } from '../shared/rows.js';
import { endpointEventRow, type WebhookEndpointRow } from '../shared/webhook-rows.js';
import type { SqliteAuditLog } from './audit-log.js';
import { OWE } from './fan-out.js';
import type { SqliteOutbox } from './outbox.js';

const QUERIES = {
  healed: 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL',
  ...healthQueries({
    endpoint: '@endpoint',
    failedAt: '@failedAt',
    pausedUntil: '@pausedUntil',
    gone: '@gone',
    since: '@since',
    now: '@now',
    enabled: '1',
    owe: OWE,
  }),
};

interface FailureParams {
  endpoint: number;
  failedAt: number | null;
  pausedUntil: number | null;
  gone: number;
  since: number | null;
  now: number;
}

/**
 * Endpoint health on SQLite, inside the write that records an attempt (one writer at a time: an endpoint is
 * disabled, and its event recorded, by one write only).
 */
export class SqliteEndpointHealth {
  readonly #healed: Database.Statement<[number]>;
  readonly #failing: Database.Statement<[FailureParams]>;
  readonly #disable: Database.Statement<[FailureParams], WebhookEndpointRow<number>>;
  readonly #outbox: SqliteOutbox;
  readonly #audit: SqliteAuditLog;

  constructor(db: Database.Database, outbox: SqliteOutbox, audit: SqliteAuditLog) {
    this.#healed = db.prepare(QUERIES.healed);
    this.#failing = db.prepare(QUERIES.failing);
    this.#disable = db.prepare(QUERIES.disable);
    this.#outbox = outbox;
    this.#audit = audit;
  }

  /** After the attempt was recorded: its endpoint's health, and what finish() answers. */
  recorded(outcome: AttemptOutcome): AttemptRecorded {
    for (const endpoint of succeeded([outcome])) this.#healed.run(endpoint);
    const disabled = new Map<number, ServiceDisable>();
    for (const failure of failures([outcome])) {
      const params = {
        endpoint: failure.endpoint,
        failedAt: failure.failedAt?.getTime() ?? null,
        pausedUntil: failure.pausedUntil?.getTime() ?? null,
        gone: Number(failure.gone),
        since: failure.since?.getTime() ?? null,
        now: Date.now(),
      };
      this.#failing.run(params);
      const row = this.#disable.get(params);
      if (row === undefined) continue;
      this.#outbox.record('webhook_endpoint.disabled', endpointEventRow(row));
      this.#audit.write(endpointDisabledByService(row, fromMilliseconds));
      disabled.set(failure.endpoint, failure.gone ? 'gone' : 'failing');
    }
    return answers([outcome], () => true, disabled)[0] ?? true;
  }
}
