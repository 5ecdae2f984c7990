import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventId } from '../../src/representations/resources.js';
import { expectError } from '../helpers/calls.js';
import type { Harness } from '../helpers/harness.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';
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
      for (const query of ['limit=0', 'limit=101', 'cursor=nonsense', 'trigger=event']) {
        expectError(await h.call('GET', `/v1/webhooks/${id}/deliveries?${query}`), 400, 'invalid_request');
      }
      const refusals = {
        'status=lost': /^query parameter "status" must be one of: pending, succeeded, failed$/,
        'status=failed&status=pending': /^query parameter "status" must be given at most once$/,
        'eventId=12': /^query parameter "eventId" must be an event id/,
        'eventId=evt_0': /^query parameter "eventId" must be an event id/,
        'eventId=evt_1x': /^query parameter "eventId" must be an event id/,
        'eventId=evt_1234567890123456': /^query parameter "eventId" must be an event id/,
      };
      for (const [query, message] of Object.entries(refusals)) {
        const refused = expectError(
          await h.call('GET', `/v1/webhooks/${id}/deliveries?${query}`),
          400,
          'invalid_request',
        );
        assert.match(refused, message, query);
      }
      const filtered = await h.call('GET', `/v1/webhooks/${id}/deliveries?status=failed&eventId=evt_1`);
      assert.deepEqual([filtered.status, filtered.json], [200, []]);
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
          trigger: 'event',
          error: 'connection refused',
          attemptedAt: failed.attemptedAt,
        },
        {
          eventId: eventId(first),
          type: 'pet.created',
          attempt: 2,
          status: 'succeeded',
          trigger: 'event',
          responseStatus: 204,
          attemptedAt: succeeded.attemptedAt,
        },
      ]);
      const next = /<([^>]+)>; rel="next"/.exec(firstPage.headers.get('link') ?? '')?.[1] ?? '';
      assert.match(next, new RegExp(`^/v1/webhooks/${watched.id}/deliveries\\?limit=2&cursor=`));
      const lastPage = await h.call('GET', next);
      assert.deepEqual(lastPage.json, [{ eventId: eventId(first), type: 'pet.created', ...retried, trigger: 'event' }]);
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

    test('filtered by status and by event, paged with the filters; a cursor holds to its filters', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { id } = await createEndpoint(h, { events: ['pet.created'] });
      await h.createPets(3);
      const seqs = (await h.sql('SELECT seq FROM events ORDER BY seq')).map((row) => Number(row.seq));
      const [first, second, third] = seqs as [number, number, number];
      const entry = (attempt: number, status: LoggedAttempt['status'], second: number) => ({
        attempt,
        status,
        responseStatus: status === 'succeeded' ? 204 : 500,
        error: status === 'succeeded' ? null : 'HTTP 500',
        attemptedAt: new Date(Date.UTC(2030, 0, 1, 0, 0, second)).toISOString(),
        nextAttemptAt: status === 'pending' ? new Date(Date.UTC(2030, 0, 1, 0, 1)).toISOString() : null,
      });
      await logAttempt(h, backend, id, first, entry(1, 'pending', 1));
      await logAttempt(h, backend, id, first, entry(2, 'succeeded', 2));
      await logAttempt(h, backend, id, second, entry(1, 'failed', 3));
      await logAttempt(h, backend, id, third, entry(1, 'failed', 4));
      const path = `/v1/webhooks/${id}/deliveries`;
      const shown = (result: { json: any }) =>
        result.json.map((e: { eventId: string; attempt: number; status: string; trigger: string }) =>
          [e.eventId, e.attempt, e.status, e.trigger].join(' '),
        );
      const nextOf = (result: { headers: Headers }) =>
        /<([^>]+)>; rel="next"/.exec(result.headers.get('link') ?? '')?.[1];

      const failed = await h.call('GET', `${path}?status=failed&limit=1`);
      assert.deepEqual(shown(failed), [`${eventId(third)} 1 failed event`]);
      const next = nextOf(failed) ?? '';
      assert.match(next, new RegExp(`^${path}\\?limit=1&status=failed&cursor=`));
      const older = await h.call('GET', next);
      assert.deepEqual(shown(older), [`${eventId(second)} 1 failed event`]);
      assert.equal(nextOf(older), undefined);

      const ofFirst = await h.call('GET', `${path}?eventId=${eventId(first)}`);
      assert.deepEqual(shown(ofFirst), [`${eventId(first)} 2 succeeded event`, `${eventId(first)} 1 pending event`]);
      const both = await h.call('GET', `${path}?eventId=${eventId(first)}&status=pending`);
      assert.deepEqual(shown(both), [`${eventId(first)} 1 pending event`]);
      const byEvent = await h.call('GET', `${path}?eventId=${eventId(first)}&status=succeeded&limit=1`);
      assert.deepEqual(shown(byEvent), [`${eventId(first)} 2 succeeded event`]);
      assert.equal(nextOf(byEvent), undefined, 'no other attempt of it succeeded');

      const cursor = new URL(next, 'http://x').searchParams.get('cursor') ?? '';
      for (const other of ['status=succeeded', '', `status=failed&eventId=${eventId(second)}`]) {
        const refused = await h.call('GET', `${path}?${other}&cursor=${encodeURIComponent(cursor)}`);
        assert.match(
          expectError(refused, 400, 'invalid_request'),
          /^query parameter "cursor" was issued for status=failed; send it with the same filters$/,
        );
      }
      const unfiltered = nextOf(await h.call('GET', `${path}?limit=1`)) ?? '';
      const withEvent = await h.call('GET', `${unfiltered}&eventId=${eventId(first)}`);
      assert.match(expectError(withEvent, 400, 'invalid_request'), /issued for no filter/);
    });
  });
});
