import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import type { Receiver } from '../../dev/webhook-receiver.js';
import { expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createEndpoint, startWebhookHarness } from '../helpers/webhooks.js';

/** Recovering an endpoint's failed deliveries, black-box: over HTTP, verified by `standardwebhooks`. */

/** Two retries 20 ms apart, then failed: a receiver down for a while ends its deliveries failed. */
const FAST: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [20, 20] },
};
const EVENTS = 12;

const recover = (h: Harness, id: number, body: unknown) => h.call('POST', `/v1/webhooks/${id}/recover`, { body });

/** Until the endpoint's log shows `n` failed deliveries (each ends with one failed entry). */
async function failed(h: Harness, id: number, n: number): Promise<void> {
  for (let i = 0; i < 250; i++) {
    const log = await h.call('GET', `/v1/webhooks/${id}/deliveries?status=failed&limit=100`);
    if (log.json.length >= n) return;
    await sleep(20);
  }
  assert.fail(`${n} deliveries did not end failed`);
}

/** A receiver that answers 500 while `down` says so, and 204 after; its 2xx requests, by webhook-id. */
async function flakyReceiver(t: Parameters<typeof startReceiver>[0]) {
  const state = { down: true };
  const answered: string[] = [];
  const receiver = await startReceiver(t, (_n, request) => {
    if (state.down) return { status: 500 };
    answered.push(request.headers['webhook-id'] ?? '');
    return { status: 204 };
  });
  return { state, answered, receiver };
}

/** Every request answered 2xx verifies with the secret, and each event arrived once. */
function deliveredOnce(receiver: Receiver, answered: string[], secret: string, n: number) {
  assert.equal(answered.length, n, 'each event once');
  assert.equal(new Set(answered).size, n);
  for (const request of receiver.received.filter((r) => answered.includes(r.headers['webhook-id'] ?? ''))) {
    new Webhook(secret).verify(request.body, request.headers);
  }
}

eachBackend((backend) => {
  describe(`webhook recover [${backend.name}]`, () => {
    test('a receiver down under steady creates gets every event after one recover, each once', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const { state, answered, receiver } = await flakyReceiver(t);
      const { id, secret } = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      const since = new Date(Date.now() - 1000).toISOString();
      for (let i = 0; i < EVENTS; i++) {
        await h.createPets(1);
        await sleep(10);
      }
      await failed(h, id, EVENTS);
      state.down = false;
      const accepted = await recover(h, id, { since });
      assert.equal(accepted.status, 202, accepted.text);
      assert.deepEqual(accepted.json, { queued: EVENTS, endpointEnabled: true });
      await receiver.until(() => answered.length === EVENTS, 10_000);
      await sleep(300);
      deliveredOnce(receiver, answered, secret, EVENTS);
      const ids = (await h.sql('SELECT seq FROM events ORDER BY seq')).map((row) => `evt_${Number(row.seq)}`);
      assert.deepEqual([...answered].sort(), [...ids].sort(), 'every event');
      const log = await h.call('GET', `/v1/webhooks/${id}/deliveries?status=succeeded&limit=100`);
      assert.ok(log.json.every((entry: { trigger: string; attempt: number }) => entry.trigger === 'recover'));
      // Sent oldest first: no attempt began before one of an older event. (They arrive as they are answered:
      // once the endpoint answers again it gets several at once, which may overtake each other.)
      const began = log.json
        .map((entry: { attemptedAt: string; eventId: string }) => ({
          at: Date.parse(entry.attemptedAt),
          seq: Number(entry.eventId.slice('evt_'.length)),
        }))
        .sort((a: { at: number; seq: number }, b: { at: number; seq: number }) => a.at - b.at || a.seq - b.seq)
        .map((entry: { seq: number }) => entry.seq);
      assert.deepEqual(
        began,
        [...began].sort((a, b) => a - b),
        'oldest first',
      );
      assert.deepEqual(
        (await recover(h, id, { since })).json,
        { queued: 0, endpointEnabled: true },
        'twice: nothing again',
      );
    });

    test('two instances recovering at once send each failed delivery once', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const other = await h.startInstance();
      const { state, answered, receiver } = await flakyReceiver(t);
      const { id, secret } = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      const since = new Date(Date.now() - 1000).toISOString();
      await h.createPets(EVENTS);
      await failed(h, id, EVENTS);
      state.down = false;
      const [mine, theirs] = await Promise.all([recover(h, id, { since }), recover(other, id, { since })]);
      assert.deepEqual([mine.status, theirs.status], [202, 202]);
      assert.equal(mine.json.queued + theirs.json.queued, EVENTS, `${mine.text} + ${theirs.text}`);
      await receiver.until(() => answered.length === EVENTS, 10_000);
      await sleep(300);
      deliveredOnce(receiver, answered, secret, EVENTS);
    });

    test('bad windows are 400 naming the field; unknown endpoints 404; a disabled one waits', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { id } = await createEndpoint(h);
      const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
      const refusals: [unknown, RegExp][] = [
        [{}, /^body\.since is required$/],
        [{ since: 'yesterday' }, /^body\.since must be an RFC 3339 date-time/],
        [{ since: '2030-02-31T00:00:00Z' }, /^body\.since must be an RFC 3339 date-time/],
        [{ since: 1_700_000_000 }, /^body\.since /],
        [{ since: hourAgo, until: '2030-01-01' }, /^body\.until must be an RFC 3339 date-time/],
        [{ since: hourAgo, until: '2020-01-01T00:00:00Z' }, /^body\.since must not be after body\.until$/],
        [
          { since: new Date(Date.now() - 31 * 86_400_000).toISOString() },
          /^body\.since must be within the last 30 days \(EVENT_RETENTION_DAYS\)/,
        ],
        [{ since: hourAgo, from: hourAgo }, /unknown field "from"/],
      ];
      for (const [body, message] of refusals) {
        assert.match(expectError(await recover(h, id, body), 400, 'invalid_request'), message, JSON.stringify(body));
      }
      assert.match(
        expectError(await recover(h, id + 1, { since: hourAgo }), 404, 'not_found'),
        new RegExp(`^webhook endpoint ${id + 1} does not exist$`),
      );
      const path = `/v1/webhooks/${id}/recover`;
      expectError(await h.call('POST', path, { body: { since: hourAgo }, key: h.keys.read }), 403, 'forbidden');
      assert.equal((await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: false } })).status, 200);
      const accepted = await recover(h, id, { since: hourAgo, until: new Date().toISOString() });
      assert.deepEqual(
        [accepted.status, accepted.json],
        [202, { queued: 0, endpointEnabled: false }],
        'it says it waits',
      );
    });
  });
});
