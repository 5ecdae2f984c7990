import { TEST_EVENT_TYPE } from '../../domain/event-types.js';
import type {
  RecoverQuery,
  RecoverResult,
  ResendQuery,
  ResendResult,
  TestSendQuery,
  TestSendResult,
} from '../redelivery-records.js';
import { SEEN_BY } from '../shared/event-rows.js';
import {
  failedInWindow,
  RECOVER_PER_WRITE,
  type RecoverStep,
  type ResendFacts,
  recoverInSteps,
  resendRefusal,
  resendUpsert,
} from '../shared/redelivery.js';
import type { RedeliveryStore } from '../store.js';
import type { Database } from './postgres-db.js';
import { OWED, SUBSCRIBED } from './subscribed.js';

const QUERIES = {
  /**
   * One statement: the endpoint, locked FOR SHARE so no fan-out step or subscription change moves its
   * position meanwhile (those lock it FOR UPDATE; a step skips it), the event, and the upsert when the
   * facts allow it. A deleted endpoint takes the row with it (ON DELETE CASCADE).
   */
  resend: `WITH w AS (SELECT id, owner, events, enabled, fanned_tx, fanned_seq, owed_tx, owed_seq FROM webhook_endpoints
      WHERE id = $1 FOR SHARE),
    e AS (SELECT tx, seq, type, owner FROM events WHERE seq = $2 AND ${SEEN_BY('$4::text')}),
    facts AS (
      SELECT (SELECT id FROM w) AS endpoint, (SELECT enabled FROM w) AS enabled, (SELECT type FROM e) AS type,
        (SELECT ${SUBSCRIBED} FROM w, e) AS subscribed,
        coalesce((SELECT ${OWED} FROM w, e), false) AS owed
    ),
    queued AS (
      ${resendUpsert(`SELECT $2::bigint, $1::bigint, 'pending', $3::timestamptz, 'resend' FROM facts
        WHERE endpoint IS NOT NULL AND type IS NOT NULL AND subscribed AND NOT owed`)}
      RETURNING 1
    )
    SELECT f.*, EXISTS (SELECT FROM queued) AS queued FROM facts f`,
  /**
   * One step: the candidates as of the statement's snapshot, each queued only if still failed once its
   * row is locked: one another instance's recovery queued meanwhile is passed over, so each is queued once.
   */
  recover: `WITH candidates AS (${failedInWindow({
    endpoint: '$1',
    after: '$2',
    since: '$3',
    until: '$4',
    limit: '$5',
  })}),
    moved AS (
      UPDATE webhook_deliveries d SET status = 'pending', attempts = 0, claimed_until = NULL,
        triggered_by = 'recover', next_attempt_at = c.at
      FROM candidates c WHERE d.id = c.id AND d.status = 'failed'
      RETURNING d.id
    )
    SELECT (SELECT count(*) FROM moved)::int AS queued, (SELECT max(event_seq) FROM candidates) AS last,
      (SELECT enabled FROM webhook_endpoints WHERE id = $1) AS enabled`,
  /**
   * One statement: the endpoint, locked FOR KEY SHARE so it is not deleted meanwhile (a delete waits; one
   * that committed first leaves no row, and nothing is recorded), the test event and its delivery.
   */
  test: `WITH w AS (SELECT id, enabled FROM webhook_endpoints WHERE id = $1 FOR KEY SHARE),
    e AS (
      INSERT INTO events (type, at, data)
      SELECT '${TEST_EVENT_TYPE}', $2, json_build_object('webhook_id', id)::text FROM w RETURNING seq
    ),
    d AS (
      INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at, triggered_by)
      SELECT seq, $1, 'pending', $2, 'test' FROM e
    )
    SELECT seq, enabled FROM e, w`,
};

/** Redeliveries on PostgreSQL: a resend is one statement, a recovery one statement per step. */
export class PostgresRedeliveryStore implements RedeliveryStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async resend({ endpointId, eventSeq, now, owner }: ResendQuery): Promise<ResendResult> {
    const values = [endpointId, eventSeq, now, owner ?? null];
    const [row] = await this.#db.rows<ResendFacts & { queued: boolean }>('redeliveries-resend', QUERIES.resend, values);
    const facts = row as ResendFacts & { queued: boolean };
    return resendRefusal(facts) ?? { outcome: facts.queued ? 'queued' : 'pending', enabled: Boolean(facts.enabled) };
  }

  recover({ endpointId, since, until }: RecoverQuery): Promise<RecoverResult | undefined> {
    return recoverInSteps(async (after) => {
      const values = [endpointId, after, since, until, RECOVER_PER_WRITE];
      const [row] = await this.#db.rows<RecoverStep>('redeliveries-recover', QUERIES.recover, values);
      return row as RecoverStep;
    });
  }

  async sendTest({ endpointId, now }: TestSendQuery): Promise<TestSendResult | undefined> {
    const [row] = await this.#db.rows<TestSendResult>('redeliveries-test', QUERIES.test, [endpointId, now]);
    return row;
  }
}
