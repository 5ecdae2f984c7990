import {
  type AuditAction,
  type AuditContext,
  changedFields,
  endpointChangeAction,
  type NewAuditEntry,
  SERVICE_AUDIT,
} from '../../domain/audit.js';
import { DEFAULT_OWNER } from '../../domain/owner.js';
import type { ToDate } from './rows.js';
import { endpointEventRow, snapshotFromRow, type WebhookEndpointRow } from './webhook-rows.js';

/**
 * The audit entries of webhook endpoints' changes, for both backends, from the rows before and after. What
 * an entry records of an endpoint is what its events show (snapshotFromRow: never a secret), diffed field by
 * field, so a field an endpoint comes to show is recorded without a change here.
 */
const shown = <D>(row: WebhookEndpointRow<D>, toDate: ToDate<D>): Record<string, unknown> => ({
  ...snapshotFromRow(endpointEventRow(row), toDate),
});

function entry<D>(
  action: AuditAction,
  row: WebhookEndpointRow<D>,
  audit: AuditContext,
  changes: NewAuditEntry['changes'],
): NewAuditEntry {
  const target = { kind: 'webhook_endpoint' as const, id: String(row.id), owner: row.owner ?? DEFAULT_OWNER };
  return { ...audit, action, target, changes };
}

export const endpointCreated = <D>(row: WebhookEndpointRow<D>, toDate: ToDate<D>, audit: AuditContext) =>
  entry('webhook_endpoint.created', row, audit, changedFields({}, shown(row, toDate)));

/** Its fields as they were, each now null: what a URL used to be is still known once it is gone. */
export const endpointDeleted = <D>(row: WebhookEndpointRow<D>, toDate: ToDate<D>, audit: AuditContext) =>
  entry('webhook_endpoint.deleted', row, audit, changedFields(shown(row, toDate), {}));

/** A rotation is recorded whatever it changed that is shown (never the secret: that it happened is the entry). */
export const endpointRotated = <D>(
  before: WebhookEndpointRow<D>,
  after: WebhookEndpointRow<D>,
  toDate: ToDate<D>,
  audit: AuditContext,
) => entry('webhook_endpoint.secret_rotated', after, audit, changedFields(shown(before, toDate), shown(after, toDate)));

/** An update's entry, named by what it did (endpointChangeAction); undefined when it changed nothing. */
export function endpointChanged<D>(
  before: WebhookEndpointRow<D>,
  after: WebhookEndpointRow<D>,
  toDate: ToDate<D>,
  audit: AuditContext,
): NewAuditEntry | undefined {
  const changes = changedFields(shown(before, toDate), shown(after, toDate));
  return changes === undefined ? undefined : entry(endpointChangeAction(changes), after, audit, changes);
}

/** The service's disable (endpoint-health.ts): it was enabled, so it had no reason nor time of a disable. */
export function endpointDisabledByService<D>(after: WebhookEndpointRow<D>, toDate: ToDate<D>): NewAuditEntry {
  const before = { ...after, enabled: true, disabled_reason: null, disabled_at: null };
  return endpointChanged(before, after, toDate, SERVICE_AUDIT) as NewAuditEntry;
}
