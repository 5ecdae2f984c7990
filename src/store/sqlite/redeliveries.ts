import type Database from 'better-sqlite3';
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
  type ResendFacts,
  recoverInSteps,
  resendRefusal,
  resendUpsert,
} from '../shared/redelivery.js';
import type { RedeliveryStore } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import { OWED, SUBSCRIBED } from './subscribed.js';

const QUERIES = {
  facts: `SELECT w.id AS endpoint, w.enabled, e.type, ${SUBSCRIBED} AS subscribed, ${OWED} AS owed
    FROM (SELECT 1) LEFT JOIN webhook_endpoints w ON w.id = @endpoint
      LEFT JOIN (SELECT seq, type, owner FROM events WHERE seq = @seq AND ${SEEN_BY('@owner')}) e ON 1`,
  resend: resendUpsert("VALUES (@seq, @endpoint, 'pending', @now, 'resend')"),
  // One write takes the candidates and queues them: no other write runs between, so every one is queued.
  recover: `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, claimed_until = NULL,
      triggered_by = 'recover', next_attempt_at = (SELECT at FROM events WHERE seq = event_seq)
    WHERE id IN (SELECT id FROM (${failedInWindow({
      endpoint: '@endpoint',
      after: '@after',
      since: '@since',
      until: '@until',
      limit: '@limit',
    })}))
    RETURNING event_seq`,
  enabled: 'SELECT enabled FROM webhook_endpoints WHERE id = @endpoint',
  testEvent: `INSERT INTO events (type, at, data) VALUES ('${TEST_EVENT_TYPE}', @now, json_object('webhook_id', @endpoint))
    RETURNING seq`,
  testDelivery: `INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at, triggered_by)
    VALUES (@seq, @endpoint, 'pending', @now, 'test')`,
};

/** Redeliveries on SQLite: each resend, and each step of a recovery, is one write of the group commit. */
export class SqliteRedeliveryStore implements RedeliveryStore {
  readonly #writes: GroupCommit;
  readonly #facts: Database.Statement<[{ endpoint: number; seq: number; owner: string | null }], ResendFacts>;
  readonly #resend: Database.Statement<[{ endpoint: number; seq: number; now: number }]>;
  readonly #recover: Database.Statement<[Record<string, number>], number>;
  readonly #enabled: Database.Statement<[{ endpoint: number }], number>;
  readonly #testEvent: Database.Statement<[{ endpoint: number; now: number }], number>;
  readonly #testDelivery: Database.Statement<[{ endpoint: number; seq: number; now: number }]>;

  constructor(db: Database.Database, writes: GroupCommit) {
    this.#writes = writes;
    this.#facts = db.prepare(QUERIES.facts);
    this.#resend = db.prepare(QUERIES.resend);
    this.#recover = db.prepare<[Record<string, number>], number>(QUERIES.recover).pluck();
    this.#enabled = db.prepare<[{ endpoint: number }], number>(QUERIES.enabled).pluck();
    this.#testEvent = db.prepare<[{ endpoint: number; now: number }], number>(QUERIES.testEvent).pluck();
    this.#testDelivery = db.prepare(QUERIES.testDelivery);
  }

  resend({ endpointId: endpoint, eventSeq: seq, now, owner }: ResendQuery): Promise<ResendResult> {
    return this.#writes.run(() => {
      const facts = this.#facts.get({ endpoint, seq, owner: owner ?? null }) as ResendFacts;
      const refusal = resendRefusal(facts);
      if (refusal !== undefined) return refusal;
      const changed = this.#resend.run({ endpoint, seq, now: now.getTime() }).changes;
      return { outcome: changed === 0 ? 'pending' : 'queued', enabled: facts.enabled === 1 };
    });
  }

  recover({ endpointId: endpoint, since, until }: RecoverQuery): Promise<RecoverResult | undefined> {
    const window = { endpoint, since: since.getTime(), until: until.getTime(), limit: RECOVER_PER_WRITE };
    return recoverInSteps((after) =>
      this.#writes.run(() => {
        const queued = this.#recover.all({ ...window, after });
        const last = queued.length === 0 ? null : Math.max(...queued);
        return { queued: queued.length, last, enabled: this.#enabled.get({ endpoint }) ?? null };
      }),
    );
  }

  sendTest({ endpointId: endpoint, now }: TestSendQuery): Promise<TestSendResult | undefined> {
    const at = now.getTime();
    return this.#writes.run(() => {
      const enabled = this.#enabled.get({ endpoint });
      if (enabled === undefined) return undefined;
      const seq = this.#testEvent.get({ endpoint, now: at }) as number;
      this.#testDelivery.run({ endpoint, seq, now: at });
      return { seq, enabled: enabled === 1 };
    });
  }
}
