import type pg from 'pg';
import { CLI_AUDIT } from '../../domain/audit.js';
import { recordAudit } from './audit-log.js';

/** What `petstore restored` found and did. */
export interface MarkedRestored {
  /** The last event id the restored database had handed out: cursors up to here go on working. */
  readonly lastEventSeq: number;
  /** The first event id from now on. */
  readonly nextEventSeq: number;
  readonly pendingDeliveries: number;
}

/** Why `restored` refused, in a sentence for the operator; nothing was changed. */
class RestoredError extends Error {}

const QUERIES = {
  others: `SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name IN ('petstore', 'petstore-listen') AND pid <> pg_backend_pid()`,
  last: "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'seq')::regclass), 0)::text AS seq",
  lock: 'LOCK TABLE events, webhook_endpoints, event_retention, webhook_deliveries IN EXCLUSIVE MODE',
  // Endpoints' positions to (0, seq), from the old order, before the events' move: to just before the first
  // event after it (what was fanned out may be queued again, which ON CONFLICT keeps single; nothing is
  // skipped), and what a service disable left owed to the last event at or before it.
  endpoints: `UPDATE webhook_endpoints w SET fanned_tx = '0',
      fanned_seq = coalesce((SELECT min(e.seq) - 1 FROM events e WHERE (e.tx, e.seq) > (w.fanned_tx, w.fanned_seq)),
        (SELECT coalesce(max(seq), 0) FROM events)),
      owed_tx = CASE WHEN w.owed_seq IS NULL THEN NULL ELSE '0'::xid8 END,
      owed_seq = CASE WHEN w.owed_seq IS NULL THEN NULL ELSE
        coalesce((SELECT max(e.seq) FROM events e WHERE (e.tx, e.seq) <= (w.owed_tx, w.owed_seq)), 0) END`,
  retention: 'UPDATE event_retention SET purged_tx = 0',
  events: "UPDATE events SET tx_before_restore = tx, tx = '0'",
  gap: 'INSERT INTO event_gaps (lost_after, resumed_at) VALUES ($1, $2)',
  sequence: "SELECT setval(pg_get_serial_sequence('events', 'seq'), $1)",
  claims: 'UPDATE webhook_deliveries SET claimed_until = NULL WHERE claimed_until IS NOT NULL',
  pending: "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'",
};

/**
 * After pg_restore, with every instance stopped: in one transaction, the restored events move to the
 * positions (0, seq) (a restore into another server brings transaction ids it has not reached, which the
 * feed would hide, and after which it would put every new event), endpoints' fan-out positions with them;
 * event ids go on from `nextEventSeq`; the lost range is recorded (event_gaps); claims in flight are let go;
 * the audit log records the restore (`database.restored`, by the command line).
 * `nextEventSeq` is computed by the caller from the last id (nextEventSeqFloor).
 */
export async function markRestored(
  client: pg.ClientBase,
  nextEventSeq: (lastEventSeq: number) => number,
): Promise<MarkedRestored> {
  const others = (await client.query<{ n: number }>(QUERIES.others)).rows[0]?.n ?? 0;
  if (others > 0) {
    throw new RestoredError(`${others} petstore connections are open to this database: stop every instance first`);
  }
  await client.query('BEGIN');
  try {
    await client.query(QUERIES.lock);
    const last = Number((await client.query<{ seq: string }>(QUERIES.last)).rows[0]?.seq ?? 0);
    const next = nextEventSeq(last);
    await client.query(QUERIES.endpoints);
    await client.query(QUERIES.retention);
    await client.query(QUERIES.events);
    await client.query(QUERIES.gap, [last, next]);
    await client.query(QUERIES.sequence, [next - 1]);
    await client.query(QUERIES.claims);
    const target = { kind: 'database' as const, id: 'pg_restore', owner: null };
    await recordAudit(client, { ...CLI_AUDIT, action: 'database.restored', target });
    const pendingDeliveries = (await client.query<{ n: number }>(QUERIES.pending)).rows[0]?.n ?? 0;
    await client.query('COMMIT');
    return { lastEventSeq: last, nextEventSeq: next, pendingDeliveries };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
