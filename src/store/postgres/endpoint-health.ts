import type pg from 'pg';
import { endpointDisabledByService } from '../shared/endpoint-audit.js';
import { type EndpointFailures, healthQueries, type ServiceDisable } from '../shared/endpoint-health.js';
import { asDate } from '../shared/rows.js';
import { endpointEventRow, type WebhookEndpointRow } from '../shared/webhook-rows.js';
import { recordAudit } from './audit-log.js';
import { OWE } from './fan-out.js';
import { recordEvents } from './outbox.js';

// `wait_until`, not paused_until: the disable returns the endpoint's columns, and a like name would be ambiguous.
const INPUT = `WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::boolean[], $4::timestamptz[], $5::timestamptz[])
      AS i(endpoint, failed_at, gone, since, wait_until)
  )`;
const HEALTH = healthQueries(
  {
    endpoint: 'i.endpoint',
    failedAt: 'i.failed_at',
    pausedUntil: 'i.wait_until',
    gone: 'i.gone',
    since: 'i.since',
    now: 'now()',
    enabled: 'true',
    owe: OWE,
  },
  'FROM input i',
);
const QUERIES = { failing: `${INPUT} ${HEALTH.failing}`, disable: `${INPUT} ${HEALTH.disable}` };

/**
 * Failed attempts' endpoints on PostgreSQL, in the transaction that records the attempts: their failing
 * starts, and those to disable are disabled, each with its `webhook_endpoint.disabled` event. The disable
 * waits for the endpoint's row lock and checks `enabled` again on the row it locked, so of two instances
 * one disables it and records the event. Returns the reasons by endpoint id.
 */
export async function recordFailures(
  client: pg.ClientBase,
  failures: readonly EndpointFailures[],
): Promise<Map<number, ServiceDisable>> {
  const disabled = new Map<number, ServiceDisable>();
  if (failures.length === 0) return disabled;
  const values = [
    failures.map((f) => f.endpoint),
    failures.map((f) => f.failedAt),
    failures.map((f) => f.gone),
    failures.map((f) => f.since),
    failures.map((f) => f.pausedUntil),
  ];
  await client.query({ name: 'endpoints-failing', text: QUERIES.failing, values });
  const { rows } = await client.query<WebhookEndpointRow<Date>>({
    name: 'endpoints-disable',
    text: QUERIES.disable,
    values,
  });
  if (rows.length === 0) return disabled;
  const events = rows.map((row) => ({ type: 'webhook_endpoint.disabled' as const, row: endpointEventRow(row) }));
  // Recorded by a finish batch that serves many attempts: no one trace is theirs.
  await recordEvents(client, events, null);
  for (const row of rows) await recordAudit(client, endpointDisabledByService(row, asDate));
  for (const row of rows) disabled.set(row.id, row.disabled_reason as ServiceDisable);
  return disabled;
}
