import type { AttemptOutcome, AttemptRecorded, ClaimQuery, DeliveryStats, DueDelivery } from '../records.js';
import {
  answerValues,
  attemptsAfter,
  type DueDeliveryRow,
  deliveryStatsQuery,
  dueFromRow,
  dueOfEndpoint,
  firstTestsOfEndpoint,
  freeJson,
} from '../shared/delivery-rows.js';
import { FanOutCadence } from '../shared/fan-out-reach.js';
import { asDate } from '../shared/rows.js';
import { type SecretsRow, secretsFromRow, secretsOf } from '../shared/webhook-rows.js';
import type { DeliveryStore } from '../store.js';
import type { SigningSecrets } from '../webhook-endpoint-records.js';
import { DeliveriesVacuum } from './deliveries-vacuum.js';
import { deliveryFinishBatch } from './delivery-finish-batch.js';
import { freeSlots, type PostgresFanOut, UNQUEUED } from './fan-out.js';
import type { Database } from './postgres-db.js';
import type { StatementBatch } from './statement-batch.js';

const DUE = dueOfEndpoint({ endpoint: 's.id', now: '$1', limit: 's.free', ordered: 's.ordered' });
const FIRST_TESTS = firstTestsOfEndpoint({ endpoint: 's.id', now: '$1', limit: 's.free' });

/**
 * For the claim only: a sort costs more than any plan, so each endpoint's due deliveries are read in the
 * index's order and the read stops at its limit. Without it, the planner picks a bitmap scan of the whole
 * backlog and a sort whenever its statistics say few deliveries are pending (a fresh table, or statistics
 * from before a backlog built up): measured, every claim then read all of them. No JIT: the sort that
 * remains (of the few taken) now counts as costly, and compiling for it took 500 ms.
 */
export const IN_INDEX_ORDER = ['enable_sort = off', 'jit = off'];

/** The statements, exported so a test can check their plans. */
export const DELIVERY_QUERIES = {
  /**
   * One statement claims: the enabled endpoints in turn, from the one after $6 (where the last claim
   * stopped), each its free slots (from $3 by id, else $4, but none for an endpoint of an owner in $7, at its
   * share) of its oldest due deliveries, locked as they are read, until $5 are taken: with 1,000 endpoints
   * and a backlog a claim probes a few of them, not all. Of an endpoint paused by a Retry-After until after
   * $1, only its untried test sends, first. Rows another instance is claiming right now are skipped (SKIP
   * LOCKED), never waited for, and a row changed since the snapshot is checked again on its newest version
   * once locked. They are claimed until $2.
   */
  claim: `WITH slots AS (
      SELECT w.id, least($5::int, ${freeSlots({ free: '$3', freeOtherwise: '$4', fullOwners: '$7' })}) AS free,
        coalesce(w.paused_until > $1, false) AS paused, w.ordering = 'subject' AS ordered
      FROM webhook_endpoints w WHERE w.enabled
      ORDER BY w.id <= $6::bigint, w.id
    ),
    due AS (
      (SELECT d.id FROM slots s CROSS JOIN LATERAL (${FIRST_TESTS} FOR UPDATE OF d SKIP LOCKED) d
        WHERE s.free > 0 AND s.paused)
      UNION ALL
      (SELECT d.id FROM slots s CROSS JOIN LATERAL (${DUE} FOR UPDATE OF d SKIP LOCKED) d
        WHERE s.free > 0 AND NOT s.paused)
      LIMIT $5
    ),
    claimed AS (
      UPDATE webhook_deliveries d SET claimed_until = $2 FROM due WHERE d.id = due.id
      RETURNING d.id, d.attempts, d.endpoint_id, d.event_seq, d.next_attempt_at
    )
    SELECT c.id AS delivery_id, c.attempts, c.endpoint_id, w.owner, w.url, w.rate_limit, w.secret,
      w.previous_secret, w.previous_secret_expires_at,
      e.seq, e.tx::text::bigint AS tx, e.type, e.subject, e.at, e.data, e.previous_status, e.trace
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.seq = c.event_seq
    ORDER BY c.next_attempt_at, c.id`,
  finish: `WITH moved AS (
      UPDATE webhook_deliveries SET status = $3, attempts = $10, next_attempt_at = $5, claimed_until = NULL
      WHERE id = $1 AND claimed_until = $2 AND status = 'pending'
      RETURNING id, endpoint_id, event_seq, triggered_by
    ),
    healed AS (
      UPDATE webhook_endpoints w SET failing_since = NULL FROM moved m
      WHERE w.id = m.endpoint_id AND $3 = 'succeeded' AND w.failing_since IS NOT NULL
    )
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, response_status,
      error, attempted_at, next_attempt_at, triggered_by, duration_ms, response_body, response_body_truncated)
    SELECT id, endpoint_id, event_seq, $6, $4, $3, $7, $8, $9, $5, triggered_by, $11, $12, $13
    FROM moved RETURNING delivery_id`,
  release: `UPDATE webhook_deliveries d SET claimed_until = NULL
    FROM unnest($1::bigint[], $2::timestamptz[]) AS r(id, claimed_until)
    WHERE d.id = r.id AND d.claimed_until = r.claimed_until AND d.status = 'pending'`,
  stats: deliveryStatsQuery('w.enabled', UNQUEUED),
  secrets: secretsOf('SELECT unnest($1::bigint[])'),
};

/**
 * Deliveries on PostgreSQL: any number of instances claim from one table without sending one twice. A
 * claim first queues the deliveries of events recorded since the last one (PostgresFanOut), then claims.
 */
export class PostgresDeliveryStore implements DeliveryStore {
  readonly #db: Database;
  readonly #fanOut: PostgresFanOut;
  readonly #finishes: StatementBatch<AttemptOutcome, AttemptRecorded, AttemptRecorded[]>;
  readonly #vacuum: DeliveriesVacuum;
  /** The endpoint the last claim stopped at: the next starts after it. */
  #last = 0;
  /** The last claim took less than it could: the next one fans out first. */
  #short = true;
  readonly #cadence = new FanOutCadence();

  constructor(db: Database, fanOut: PostgresFanOut) {
    this.#db = db;
    this.#fanOut = fanOut;
    this.#finishes = deliveryFinishBatch(db, finishValues, DELIVERY_QUERIES.finish);
    this.#vacuum = new DeliveriesVacuum(db);
  }

  async claim(query: ClaimQuery): Promise<DueDelivery[]> {
    if (query.limit <= 0) return [];
    // A backlog is queued as it is sent: a step (QUEUE_PER_STEP) once what is queued ran short.
    const now = Date.now();
    if (this.#short || this.#cadence.overdue(now) || this.#fanOut.unreached()) {
      this.#cadence.stepped(now);
      // No endpoint enabled (or owed): nothing can be due, so the claim's transaction is spared too.
      if ((await this.#fanOut.step(query)) === 0) return [];
    }
    const claimedUntil = new Date(query.now.getTime() + query.leaseMs);
    const values = [
      query.now,
      claimedUntil,
      freeJson(query.free),
      query.freeOtherwise,
      query.limit,
      this.#last,
      query.fullOwners,
    ];
    const rows = await this.#db.transaction(
      async (client) =>
        (await client.query<DueDeliveryRow<Date>>({ name: 'deliveries-claim', text: DELIVERY_QUERIES.claim, values }))
          .rows,
      { settings: IN_INDEX_ORDER },
    );
    this.#short = rows.length < query.limit;
    this.#last = nextInTurn(
      this.#last,
      rows.map((row) => row.endpoint_id),
    );
    return rows.map((row) => dueFromRow(row, claimedUntil, asDate));
  }

  unreached(): boolean {
    return this.#fanOut.unreached();
  }

  /**
   * Outcomes that arrive together are recorded in one statement and one commit (deliveryFinishBatch); the
   * table is vacuumed as they add up (DeliveriesVacuum).
   */
  finish(outcome: AttemptOutcome): Promise<AttemptRecorded> {
    this.#vacuum.recorded(1);
    return this.#finishes.run(outcome);
  }

  async release(deliveries: readonly DueDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const values = [deliveries.map(({ id }) => id), deliveries.map(({ claimedUntil }) => claimedUntil)];
    await this.#db.rows('deliveries-release', DELIVERY_QUERIES.release, values);
  }

  async signingSecrets(endpointIds: readonly number[]): Promise<Map<number, SigningSecrets>> {
    type Row = SecretsRow<Date> & { id: string | number };
    const rows = await this.#db.rows<Row>('deliveries-secrets', DELIVERY_QUERIES.secrets, [endpointIds]);
    return new Map(rows.map((row) => [Number(row.id), secretsFromRow(row, asDate)]));
  }

  async stats(now: Date): Promise<DeliveryStats> {
    const [row] = await this.#db.rows<{ pending: number; oldest: Date | null }>(
      'deliveries-stats',
      DELIVERY_QUERIES.stats,
      [],
    );
    const oldest = row?.oldest ?? null;
    const oldestPendingSeconds = oldest === null ? 0 : Math.max(0, (now.getTime() - oldest.getTime()) / 1000);
    return { pending: row?.pending ?? 0, oldestPendingSeconds };
  }
}

/** DELIVERY_QUERIES.finish's parameters for one outcome. */
function finishValues(outcome: AttemptOutcome): unknown[] {
  const { delivery } = outcome;
  return [
    delivery.id,
    delivery.claimedUntil,
    outcome.status,
    delivery.attempt,
    outcome.nextAttemptAt ?? null,
    delivery.event.type,
    outcome.responseStatus ?? null,
    outcome.error ?? null,
    outcome.attemptedAt,
    attemptsAfter(outcome),
    ...answerValues(outcome),
  ];
}

/** Where a claim that took from `endpoints`, starting after `last`, stopped: the last of them in that turn. */
function nextInTurn(last: number, endpoints: number[]): number {
  const after = endpoints.filter((id) => id > last);
  const turn = after.length > 0 ? after : endpoints;
  return turn.length > 0 ? Math.max(...turn) : last;
}
