import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventId } from '../../src/representations/resources.js';
import { eachBackend, expectError, type Harness } from '../helpers/harness.js';
import type { StoreBackend } from '../helpers/stores.js';
import { createEndpoint, startWebhookHarness } from '../helpers/webhooks.js';

interface LoggedAttempt {
  readonly attempt: number;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly responseStatus: number | null;
  readonly error: string | null;
  readonly attemptedAt: string;
  readonly nextAttemptAt: string | null;
}

/**
 * Writes a row of the deliveries log, as the sender would, for the delivery of event `seq` to `endpointId`
 * (queued first if it is not yet: on SQLite, fan-out follows the commit, and no dispatcher runs here).
 */
async function logAttempt(h: Harness, backend: StoreBackend, endpointId: number, seq: number, row: LoggedAttempt) {
  const at = (iso: string | null) =>
    iso === null ? 'NULL' : backend.name === 'sqlite' ? String(Date.parse(iso)) : `'${iso}'::timestamptz`;
  const text = (value: string | null) => (value === null ? 'NULL' : `'${value}'`);
  await h.sql(
    `INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, next_attempt_at)
     SELECT seq, ${endpointId}, 'pending', at FROM events WHERE seq = ${seq} ON CONFLICT DO NOTHING`,
  );
  await h.sql(
    `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt, status, response_status,
       error, attempted_at, next_attempt_at)
     SELECT d.id, d.endpoint_id, d.event_seq, e.type, ${row.attempt}, '${row.status}', ${row.responseStatus ?? 'NULL'},
       ${text(row.error)}, ${at(row.attemptedAt)}, ${at(row.nextAttemptAt)}
     FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
     WHERE d.endpoint_id = ${endpointId} AND d.event_seq = ${seq}`,
  );
}

async function count(h: Harness, table: string, endpointId: number): Promise<number> {
  const [row] = await h.sql(`SELECT count(*) AS n FROM ${table} WHERE endpoint_id = ${endpointId}`);
  return Number(row?.n);
}

eachBackend((backend) => {
  describe(`webhook deliveries log [${backend.name}]`, () => {
    test('empty for a new endpoint; 404 for an unknown one; bad queries are 400', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { id } = await createEndpoint(h);
      const empty = await h.call('GET', `/v1/webhooks/${id}/deliveries`);
      assert.equal(empty.status, 200);
      assert.deepEqual(empty.json, []);
      assert.equal(empty.headers.get('link'), null);
      assert.match(
        expectError(await h.call('GET', '/v1/webhooks/999/deliveries'), 404, 'not_found'),
        /webhook endpoint 999 does not exist/,
      );
      for (const query of ['limit=0', 'limit=101', 'cursor=nonsense', 'status=failed']) {
        expectError(await h.call('GET', `/v1/webhooks/${id}/deliveries?${query}`), 400, 'invalid_request');
      }
    });

    test('one entry per attempt, newest first, paged; removed with its endpoint', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const watched = await createEndpoint(h, { events: ['pet.created'] });
      const other = await createEndpoint(h);
      await h.createPets(2);
      const [first, second] = (await h.sql('SELECT seq FROM events ORDER BY seq')).map((row) => Number(row.seq));
      assert.ok(first !== undefined && second !== undefined);
      const retried = {
        attempt: 1,
        status: 'pending',
        responseStatus: 503,
        error: 'HTTP 503',
        attemptedAt: '2030-01-01T00:00:00.000Z',
        nextAttemptAt: '2030-01-01T00:00:05.000Z',
      } as const;
      const succeeded = {
        attempt: 2,
        status: 'succeeded',
        responseStatus: 204,
        error: null,
        attemptedAt: '2030-01-01T00:00:05.250Z',
        nextAttemptAt: null,
      } as const;
      const failed = {
        attempt: 1,
        status: 'failed',
        responseStatus: null,
        error: 'connection refused',
        attemptedAt: '2030-01-01T00:00:06.000Z',
        nextAttemptAt: null,
      } as const;
      await logAttempt(h, backend, watched.id, first, retried);
      await logAttempt(h, backend, watched.id, first, succeeded);
      await logAttempt(h, backend, watched.id, second, failed);
      await logAttempt(h, backend, other.id, first, succeeded);

      const firstPage = await h.call('GET', `/v1/webhooks/${watched.id}/deliveries?limit=2`);
      assert.equal(firstPage.status, 200);
      assert.deepEqual(firstPage.json, [
        {
          eventId: eventId(second),
          type: 'pet.created',
          attempt: 1,
          status: 'failed',
          error: 'connection refused',
          attemptedAt: failed.attemptedAt,
        },
        {
          eventId: eventId(first),
          type: 'pet.created',
          attempt: 2,
          status: 'succeeded',
          responseStatus: 204,
          attemptedAt: succeeded.attemptedAt,
        },
      ]);
      const next = /<([^>]+)>; rel="next"/.exec(firstPage.headers.get('link') ?? '')?.[1] ?? '';
      assert.match(next, new RegExp(`^/v1/webhooks/${watched.id}/deliveries\\?limit=2&cursor=`));
      const lastPage = await h.call('GET', next);
      assert.deepEqual(lastPage.json, [{ eventId: eventId(first), type: 'pet.created', ...retried }]);
      assert.equal(lastPage.headers.get('link'), null);
      assert.equal((await h.call('GET', `/v1/webhooks/${other.id}/deliveries`)).json.length, 1);

      const othersQueued = await count(h, 'webhook_deliveries', other.id);
      assert.ok(othersQueued > 0);
      assert.equal((await h.call('DELETE', `/v1/webhooks/${watched.id}`)).status, 204);
      assert.equal(await count(h, 'webhook_attempts', watched.id), 0, 'its log goes with it');
      assert.equal(await count(h, 'webhook_deliveries', watched.id), 0, 'and its pending deliveries');
      assert.equal(await count(h, 'webhook_attempts', other.id), 1, "another endpoint's log stays");
      assert.equal(await count(h, 'webhook_deliveries', other.id), othersQueued);
      expectError(await h.call('GET', `/v1/webhooks/${watched.id}/deliveries`), 404, 'not_found');
    });
  });
});
