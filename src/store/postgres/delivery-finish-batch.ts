import type { AttemptOutcome, AttemptRecorded } from '../records.js';
import { answerValues, attemptsAfter } from '../shared/delivery-rows.js';
import { answers, failures, type ServiceDisable } from '../shared/endpoint-health.js';
import { recordFailures } from './endpoint-health.js';
import type { Database } from './postgres-db.js';
import { StatementBatch } from './statement-batch.js';

/** How long the first outcome of a batch waits for others: no one but the dispatcher waits for the record. */
const GATHER_MS = 10;

/**
 * Records a batch of attempts in one statement (see DELIVERY_QUERIES.finish for one): each delivery moves
 * on only while the claim is still the one the attempt had, and only those moved are logged (and a success
 * ends its endpoint's failing); it returns the ids of those.
 */
const FINISH_BATCH = `WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::int[], $5::timestamptz[], $6::text[],
      $7::int[], $8::text[], $9::timestamptz[], $10::int[], $11::int[], $12::text[], $13::boolean[])
      WITH ORDINALITY AS i(id, claimed_until, status, attempt, next_attempt_at, type, response_status, error,
        attempted_at, attempts, duration_ms, response_body, response_body_truncated, n)
  ),
  moved AS (
    UPDATE webhook_deliveries d
    SET status = i.status, attempts = i.attempts, next_attempt_at = i.next_attempt_at, claimed_until = NULL
    FROM input i WHERE d.id = i.id AND d.claimed_until = i.claimed_until AND d.status = 'pending'
    RETURNING d.id, d.endpoint_id, d.event_seq, d.triggered_by
  ),
  healed AS (
    UPDATE webhook_endpoints w SET failing_since = NULL FROM moved m JOIN input i ON i.id = m.id
    WHERE w.id = m.endpoint_id AND i.status = 'succeeded' AND w.failing_since IS NOT NULL
  )
  INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, response_status,
    error, attempted_at, next_attempt_at, triggered_by, duration_ms, response_body, response_body_truncated)
  SELECT m.id, m.endpoint_id, m.event_seq, i.type, i.attempt, i.status, i.response_status, i.error,
    i.attempted_at, i.next_attempt_at, m.triggered_by, i.duration_ms, i.response_body, i.response_body_truncated
  FROM moved m JOIN input i ON i.id = m.id ORDER BY i.n
  RETURNING delivery_id`;

/** Runs one statement, alone or in a transaction: the ids of the deliveries it moved. */
type Moves = (query: (name: string, text: string, values: unknown[]) => Promise<MovedRow[]>) => Promise<MovedRow[]>;

interface MovedRow {
  delivery_id: number;
}

/**
 * Records attempts with one of the statements (`moves`). When some failed, in a transaction that then
 * records their endpoints' failing and disables those due (recordFailures); all succeeded, it is one
 * statement, as before endpoints had health.
 */
async function finish(db: Database, outcomes: readonly AttemptOutcome[], moves: Moves): Promise<AttemptRecorded[]> {
  const answered = (rows: MovedRow[], disabled = new Map<number, ServiceDisable>()) => {
    const moved = new Set(rows.map((row) => Number(row.delivery_id)));
    return { moved, answers: answers(outcomes, (outcome) => moved.has(outcome.delivery.id), disabled) };
  };
  if (outcomes.every((outcome) => outcome.status === 'succeeded')) {
    return answered(await moves((name, text, values) => db.rows<MovedRow>(name, text, values))).answers;
  }
  return db.transaction(async (client) => {
    const rows = await moves(async (name, text, values) => (await client.query<MovedRow>({ name, text, values })).rows);
    const { moved } = answered(rows);
    const recorded = outcomes.filter((outcome) => moved.has(outcome.delivery.id));
    return answered(rows, await recordFailures(client, failures(recorded))).answers;
  });
}

/**
 * Batched attempt records (see StatementBatch): the outcomes of GATHER_MS, and those that arrive while a
 * batch is being committed, go together in the next. Measured: one commit per attempt held the pool's
 * connections 3.6 ms each and slowed creates by a fifth. Each resolves with whether it was recorded (and
 * whether its endpoint was disabled with it). `one` is the statement for a single outcome.
 */
export function deliveryFinishBatch(db: Database, one: (outcome: AttemptOutcome) => unknown[], oneText: string) {
  return new StatementBatch<AttemptOutcome, AttemptRecorded, AttemptRecorded[]>({
    one: async (outcome) => {
      const [answer = false] = await finish(db, [outcome], (query) =>
        query('deliveries-finish', oneText, one(outcome)),
      );
      return answer;
    },
    many: (outcomes) =>
      finish(db, outcomes, (query) => query('deliveries-finish-batch', FINISH_BATCH, columns(outcomes))),
    settle: (_outcomes, answers) => answers,
    gather: (flush) => setTimeout(flush, GATHER_MS),
  });
}

/** The batch's parameters: one array per column, in FINISH_BATCH's order. */
function columns(outcomes: readonly AttemptOutcome[]): unknown[][] {
  return [
    outcomes.map(({ delivery }) => delivery.id),
    outcomes.map(({ delivery }) => delivery.claimedUntil),
    outcomes.map(({ status }) => status),
    outcomes.map(({ delivery }) => delivery.attempt),
    outcomes.map(({ nextAttemptAt }) => nextAttemptAt ?? null),
    outcomes.map(({ delivery }) => delivery.event.type),
    outcomes.map(({ responseStatus }) => responseStatus ?? null),
    outcomes.map(({ error }) => error ?? null),
    outcomes.map(({ attemptedAt }) => attemptedAt),
    outcomes.map(attemptsAfter),
    outcomes.map((outcome) => answerValues(outcome)[0]),
    outcomes.map((outcome) => answerValues(outcome)[1]),
    outcomes.map((outcome) => answerValues(outcome)[2]),
  ];
}
