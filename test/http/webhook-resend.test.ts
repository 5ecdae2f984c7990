import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createEndpoint, startWebhookHarness } from '../helpers/webhooks.js';

/** Resending one event, black-box: over HTTP, with what a local receiver gets verified by `standardwebhooks`. */

/** One retry after 50 ms, then failed. */
const FAST: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [50] },
};

const resend = (h: Harness, id: number, eventId: unknown) =>
  h.call('POST', `/v1/webhooks/${id}/resend`, { body: { eventId } });

/** The endpoint's log for one event, newest first: `attempt status trigger`. */
async function logOf(h: Harness, id: number, eventId: string): Promise<string[]> {
  const log = await h.call('GET', `/v1/webhooks/${id}/deliveries?eventId=${eventId}`);
  return log.json.map(
    (e: { attempt: number; status: string; trigger: string }) => `${e.attempt} ${e.status} ${e.trigger}`,
  );
}

/** Until the log of the event has `n` entries (attempts are recorded just after they are sent). */
async function logged(h: Harness, id: number, eventId: string, n: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const log = await logOf(h, id, eventId);
    if (log.length >= n) return log;
    await sleep(20);
  }
  return logOf(h, id, eventId);
}

eachBackend((backend) => {
  describe(`webhook resend [${backend.name}]`, () => {
    test('a delivered event and a failed one are sent again, same webhook-id, attempts afresh', async (t) => {
      const h = await startHarness(t, backend, FAST);
      let failing = true;
      const receiver = await startReceiver(t, () => ({ status: failing ? 500 : 204 }));
      const { id, secret } = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      await h.createPets(1);
      await receiver.until((got) => got.length === 2, 5000);
      const eventId = receiver.ids()[0] as string;
      assert.deepEqual(await logged(h, id, eventId, 2), ['2 failed event', '1 pending event']);

      failing = false;
      const accepted = await resend(h, id, eventId);
      assert.equal(accepted.status, 202, accepted.text);
      assert.deepEqual(accepted.json, { eventId, status: 'pending', queued: true, endpointEnabled: true });
      await receiver.until((got) => got.length === 3, 5000);
      assert.deepEqual(await logged(h, id, eventId, 3), ['1 succeeded resend', '2 failed event', '1 pending event']);

      assert.equal((await resend(h, id, eventId)).status, 202, 'a succeeded one too');
      await receiver.until((got) => got.length === 4, 5000);
      assert.deepEqual(new Set(receiver.ids()), new Set([eventId]), 'the same webhook-id every time');
      const [, , resent, again] = receiver.received;
      for (const request of [resent, again]) {
        assert.ok(request);
        assert.equal((new Webhook(secret).verify(request.body, request.headers) as { id: string }).id, eventId);
      }
      assert.deepEqual((await logged(h, id, eventId, 4))[0], '1 succeeded resend');
    });

    test('a disabled endpoint accepts it and gets it once enabled, once however often asked', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const receiver = await startReceiver(t);
      const { id } = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      await h.createPets(1);
      await receiver.until((got) => got.length === 1, 5000);
      const eventId = receiver.ids()[0] as string;
      assert.equal((await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: false } })).status, 200);
      for (let i = 0; i < 3; i++) {
        // The first queues it; the next find it pending, and say so.
        const accepted = { eventId, status: 'pending', queued: i === 0, endpointEnabled: false };
        assert.deepEqual((await resend(h, id, eventId)).json, accepted, 'the answer says it waits');
      }
      await sleep(300);
      assert.equal(receiver.received.length, 1, 'waits while disabled');
      assert.equal((await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: true } })).status, 200);
      await receiver.until((got) => got.length === 2, 5000);
      await sleep(300);
      assert.equal(receiver.received.length, 2, 'sent once');
    });

    test('404 says which: endpoint, event unknown or removed, type not subscribed; bad bodies 400', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { id } = await createEndpoint(h, { events: ['order.placed'] });
      await h.createPets(1);
      const [row] = await h.sql('SELECT seq FROM events ORDER BY seq');
      const eventId = `evt_${Number(row?.seq)}`;
      assert.match(
        expectError(await resend(h, id, eventId), 404, 'not_found'),
        new RegExp(`^webhook endpoint ${id} is not subscribed to pet.created, the type of event ${eventId}$`),
      );
      assert.match(
        expectError(await resend(h, id, 'evt_999'), 404, 'not_found'),
        /^event evt_999 does not exist: never recorded, or removed after EVENT_RETENTION_DAYS$/,
      );
      assert.match(
        expectError(await resend(h, id + 1, eventId), 404, 'not_found'),
        new RegExp(`^webhook endpoint ${id + 1} does not exist$`),
      );
      for (const bad of ['12', 'evt_0', 'evt_', 12, null]) {
        assert.match(expectError(await resend(h, id, bad), 400, 'invalid_request'), /^body\.eventId /, String(bad));
      }
      const path = `/v1/webhooks/${id}/resend`;
      assert.match(expectError(await h.call('POST', path, { body: {} }), 400, 'invalid_request'), /body\.eventId/);
      assert.match(
        expectError(await h.call('POST', path, { body: { eventId, since: 'x' } }), 400, 'invalid_request'),
        /unknown field "since"/,
      );
      expectError(await h.call('POST', path), 400, 'invalid_request');
      expectError(await h.call('POST', path, { body: { eventId }, key: h.keys.read }), 403, 'forbidden');
      const subscribed = await createEndpoint(h, { events: ['pet.created'] });
      await h.sql(`DELETE FROM events WHERE seq = ${Number(row?.seq)}`);
      assert.match(expectError(await resend(h, subscribed.id, eventId), 404, 'not_found'), /does not exist/);
    });
  });
});
