import type Database from 'better-sqlite3';
import type { AttemptOutcome, AttemptRecorded, ClaimQuery, DeliveryStats, DueDelivery } from '../records.js';
import {
  answerValues,
  attemptsAfter,
  type DueDeliveryRow,
  deliveryStatsQuery,
  dueFromRow,
  dueOfEndpoint,
  firstTestsOfEndpoint,
} from '../shared/delivery-rows.js';
import { FanOutCadence, QUEUE_PER_STEP } from '../shared/fan-out-reach.js';
import { fromMilliseconds } from '../shared/rows.js';
import { type SecretsRow, secretsFromRow, secretsOf } from '../shared/webhook-rows.js';
import type { DeliveryStore } from '../store.js';
import type { SigningSecrets } from '../webhook-endpoint-records.js';
import type { SqliteEndpointHealth } from './endpoint-health.js';
import { type SqliteFanOut, UNQUEUED } from './fan-out.js';
import type { GroupCommit } from './group-commit.js';

/** The statements, exported so a test can check their plans. */
export const DELIVERY_QUERIES = {
  // Of an endpoint paused by a Retry-After until after now, only untried test sends are taken (firstTests).
  enabled: `SELECT id, owner, coalesce(paused_until > ?, 0) AS paused, ordering = 'subject' AS ordered
    FROM webhook_endpoints WHERE enabled = 1 ORDER BY id`,
  due: dueOfEndpoint({ endpoint: '@endpoint', now: '@now', limit: '@limit', ordered: '@ordered' }),
  firstTests: firstTestsOfEndpoint({ endpoint: '@endpoint', now: '@now', limit: '@limit' }),
  claim: 'UPDATE webhook_deliveries SET claimed_until = ? WHERE id IN (SELECT value FROM json_each(?))',
  claimed: `SELECT d.id AS delivery_id, d.attempts, d.endpoint_id, w.owner, w.url, w.rate_limit, w.secret,
      w.previous_secret, w.previous_secret_expires_at,
      e.seq, 0 AS tx, e.type, e.subject, e.at, e.data, e.previous_status, e.trace
    FROM json_each(?) j
    JOIN webhook_deliveries d ON d.id = j.value
    JOIN webhook_endpoints w ON w.id = d.endpoint_id
    JOIN events e ON e.seq = d.event_seq
    ORDER BY j.key`,
  release: `UPDATE webhook_deliveries SET claimed_until = NULL
    WHERE id = ? AND claimed_until = ? AND status = 'pending'`,
  move: `UPDATE webhook_deliveries
    SET status = @status, attempts = @attempts, next_attempt_at = @nextAttemptAt, claimed_until = NULL
    WHERE id = @id AND claimed_until = @claimedUntil AND status = 'pending'`,
  // With the delivery's trigger: the attempt was made for the reason the delivery was sent.
  log: `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, response_status,
      error, attempted_at, next_attempt_at, triggered_by, duration_ms, response_body, response_body_truncated)
    SELECT @id, @endpointId, @eventSeq, @type, @attempt, @status, @responseStatus, @error, @attemptedAt,
      @nextAttemptAt, triggered_by, @durationMs, @responseBody, @responseBodyTruncated
    FROM webhook_deliveries WHERE id = @id`,
  stats: deliveryStatsQuery('w.enabled = 1', UNQUEUED),
  secrets: secretsOf('SELECT value FROM json_each(?)'),
};

/**
 * An attempt is recorded with the next commit of other writes, or after this: its request is over, and no
 * one waits for the record but the dispatcher. Measured: a commit (an fsync) per few attempts took a third
 * of the process's time while delivering.
 */
const RECORD_WITHIN_MS = 10;

/**
 * Claims and attempt records commit without an fsync of their own (a durable write in the same batch makes
 * them durable too): what a power cut takes of them is a claim or a record, and the delivery is then sent
 * again, as after a crash mid-attempt. An fsync took 3.6 ms of the event loop on this machine kind, and an
 * idle process claimed after nearly every answer (docs/decisions/delivery-writes-unsynced.md).
 */
const UNSYNCED = { durable: false } as const;

interface DueRow {
  id: number;
}

interface EnabledRow {
  id: number;
  owner: string;
  /** 1 while a Retry-After holds it. */
  paused: number;
  /** 1 when it orders its deliveries by subject. */
  ordered: number;
}

/**
 * Deliveries on SQLite. A claim is one write through the group commit (BEGIN IMMEDIATE), which holds the
 * file's write lock, so `serve --workers` processes on one file never claim the same delivery. It first
 * queues the deliveries of events recorded since the last one (SqliteFanOut), then claims. A claim first
 * looks without writing: an idle poll costs an indexed read or two per enabled endpoint, not a commit.
 */
export class SqliteDeliveryStore implements DeliveryStore {
  readonly #enabled: Database.Statement<[number], EnabledRow>;
  readonly #due: Database.Statement<[{ endpoint: number; now: number; limit: number; ordered: number }], DueRow>;
  readonly #firstTests: Database.Statement<[{ endpoint: number; now: number; limit: number }], DueRow>;
  readonly #claim: Database.Statement<[number, string]>;
  readonly #claimed: Database.Statement<[string], DueDeliveryRow<number>>;
  readonly #release: Database.Statement<[number, number]>;
  readonly #move: Database.Statement<[Record<string, unknown>]>;
  readonly #log: Database.Statement<[Record<string, unknown>]>;
  readonly #stats: Database.Statement<[], { pending: number; oldest: number | null }>;
  readonly #secrets: Database.Statement<[string], SecretsRow<number> & { id: number }>;
  readonly #writes: GroupCommit;
  readonly #fanOut: SqliteFanOut;
  readonly #health: SqliteEndpointHealth;
  /** The endpoint the last claim stopped at: the next starts after it. */
  #last = 0;
  readonly #cadence = new FanOutCadence();

  constructor(db: Database.Database, writes: GroupCommit, fanOut: SqliteFanOut, health: SqliteEndpointHealth) {
    this.#writes = writes;
    this.#fanOut = fanOut;
    this.#health = health;
    this.#enabled = db.prepare(DELIVERY_QUERIES.enabled);
    this.#due = db.prepare(DELIVERY_QUERIES.due);
    this.#firstTests = db.prepare(DELIVERY_QUERIES.firstTests);
    this.#claim = db.prepare(DELIVERY_QUERIES.claim);
    this.#claimed = db.prepare(DELIVERY_QUERIES.claimed);
    this.#release = db.prepare(DELIVERY_QUERIES.release);
    this.#move = db.prepare(DELIVERY_QUERIES.move);
    this.#log = db.prepare(DELIVERY_QUERIES.log);
    this.#stats = db.prepare(DELIVERY_QUERIES.stats);
    this.#secrets = db.prepare(DELIVERY_QUERIES.secrets);
  }

  /**
   * The deliveries a claim may take (at most `limit`, or `want`): the enabled endpoints in turn, from the
   * one after where the last claim stopped, each its oldest due up to its free slots (a paused one, its
   * untried test sends). Stops once it has
   * enough: with 1,000 endpoints and a backlog, a claim reads a few endpoints, not all of them and their
   * 16 oldest each. Returns them with the endpoint it stopped at.
   */
  #lookDue(query: ClaimQuery, endpoints: EnabledRow[], want = query.limit): { ids: number[]; last: number } {
    const now = query.now.getTime();
    const start = endpoints.findIndex(({ id }) => id > this.#last);
    const ids: number[] = [];
    let last = this.#last;
    for (let i = 0; i < endpoints.length && ids.length < want; i++) {
      const {
        id: endpoint,
        owner,
        paused,
        ordered,
      } = endpoints[(Math.max(0, start) + i) % endpoints.length] as EnabledRow;
      const limit = Math.min(want - ids.length, slotsOf(query, endpoint, owner));
      if (limit <= 0) continue;
      const rows = paused
        ? this.#firstTests.all({ endpoint, now, limit })
        : this.#due.all({ endpoint, now, limit, ordered });
      for (const row of rows) ids.push(row.id);
      last = endpoint;
    }
    return { ids, last };
  }

  async claim(query: ClaimQuery): Promise<DueDelivery[]> {
    if (query.limit <= 0) return [];
    const enabled = () => this.#enabled.all(query.now.getTime());
    const looked = enabled();
    if (!this.#fanOut.behind(fed(query, looked)) && this.#lookDue(query, looked, 1).ids.length === 0) return [];
    const claimedUntil = new Date(query.now.getTime() + query.leaseMs);
    return this.#writes.run(() => {
      const endpoints = enabled();
      const feeds = fed(query, endpoints);
      // Again under the write lock: another process may have claimed some since the look.
      let { ids: due, last } = this.#lookDue(query, endpoints);
      // A backlog is queued as it is sent: a step (QUEUE_PER_STEP) when what is queued runs short.
      const now = Date.now();
      if ((due.length < query.limit || this.#cadence.overdue(now)) && this.#fanOut.behind(feeds)) {
        this.#cadence.stepped(now);
        this.#fanOut.step(Math.ceil(QUEUE_PER_STEP / Math.max(1, feeds.length)), feeds);
        ({ ids: due, last } = this.#lookDue(query, endpoints));
      }
      this.#last = last;
      const ids = JSON.stringify(due);
      this.#claim.run(claimedUntil.getTime(), ids);
      return this.#claimed.all(ids).map((row) => dueFromRow(row, claimedUntil, fromMilliseconds));
    }, UNSYNCED);
  }

  /** Never known: a claim here first looks without writing, in this process, at a cost of microseconds. */
  unreached(): boolean {
    return false;
  }

  finish(outcome: AttemptOutcome): Promise<AttemptRecorded> {
    const { delivery } = outcome;
    const params = {
      id: delivery.id,
      claimedUntil: delivery.claimedUntil.getTime(),
      endpointId: delivery.endpoint.id,
      eventSeq: delivery.event.seq,
      type: delivery.event.type,
      attempt: delivery.attempt,
      attempts: attemptsAfter(outcome),
      status: outcome.status,
      responseStatus: outcome.responseStatus ?? null,
      error: outcome.error ?? null,
      attemptedAt: outcome.attemptedAt.getTime(),
      nextAttemptAt: outcome.nextAttemptAt?.getTime() ?? null,
    };
    const [durationMs, responseBody, truncated] = answerValues(outcome);
    // SQLite has no boolean: the flag is 0 or 1 (null with no body).
    const answer = { durationMs, responseBody, responseBodyTruncated: truncated === null ? null : Number(truncated) };
    return this.#writes.later(
      () => {
        if (this.#move.run(params).changes === 0) return false;
        this.#log.run({ ...params, ...answer });
        return this.#health.recorded(outcome);
      },
      RECORD_WITHIN_MS,
      UNSYNCED,
    );
  }

  async release(deliveries: readonly DueDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.#writes.run(() => {
      for (const { id, claimedUntil } of deliveries) this.#release.run(id, claimedUntil.getTime());
    }, UNSYNCED);
  }

  async signingSecrets(endpointIds: readonly number[]): Promise<Map<number, SigningSecrets>> {
    const rows = this.#secrets.all(JSON.stringify(endpointIds));
    return new Map(rows.map((row) => [row.id, secretsFromRow(row, fromMilliseconds)]));
  }

  async stats(now: Date): Promise<DeliveryStats> {
    const { pending, oldest } = this.#stats.get() as { pending: number; oldest: number | null };
    return { pending, oldestPendingSeconds: oldest === null ? 0 : Math.max(0, (now.getTime() - oldest) / 1000) };
  }
}

/** What a claim may take of `endpoint`, of `owner`: its free slots, else those of one not known (none for a full owner). */
function slotsOf(query: ClaimQuery, endpoint: number, owner: string): number {
  return query.free.get(endpoint) ?? (query.fullOwners.includes(owner) ? 0 : query.freeOtherwise);
}

/** The enabled endpoints a claim may take from: those a fan-out step feeds (SqliteFanOut.step). */
function fed(query: ClaimQuery, endpoints: readonly EnabledRow[]): number[] {
  return endpoints.filter(({ id, owner }) => slotsOf(query, id, owner) > 0).map(({ id }) => id);
}
