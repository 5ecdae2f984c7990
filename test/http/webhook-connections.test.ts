import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import { PER_ENDPOINT } from '../../src/webhooks/dispatcher.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { BACKENDS } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Connections to webhook endpoints are kept alive per endpoint (docs/decisions/webhook-sender.md). The
 * store does not matter here: SQLite only.
 */

const sqlite = BACKENDS.find((backend) => backend.name === 'sqlite');
if (sqlite === undefined) throw new Error('the SQLite backend is missing');
const OPTIONS = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [60_000] },
};

async function register(h: Harness, url: string): Promise<number> {
  const result = await h.call('POST', '/v1/webhooks', { body: { url, events: ['pet.created'] } });
  assert.equal(result.status, 201, result.text);
  return result.json.id;
}

/** The deliveries log of an endpoint once it holds `count` attempts. */
function attempts(h: Harness, endpoint: number, count: number): Promise<any[]> {
  let logged = 0;
  return eventually(
    () => `${count} attempts logged (${logged} were)`,
    async () => {
      const result = await h.call('GET', `/v1/webhooks/${endpoint}/deliveries?limit=100`);
      assert.equal(result.status, 200, result.text);
      logged = result.json.length;
      return logged >= count ? result.json : undefined;
    },
  );
}

test('attempts to one endpoint reuse connections: at most its in-flight bound of them', async (t) => {
  const h = await startHarness(t, sqlite, OPTIONS);
  const receiver = await startReceiver(t);
  await register(h, receiver.url);
  const creates = 3 * PER_ENDPOINT;
  await Promise.all(Array.from({ length: creates }, () => h.createPets(1)));
  await receiver.until((got) => got.length === creates, 5000);
  t.diagnostic(`${creates} deliveries over ${receiver.connections()} connections`);
  assert.ok(receiver.connections() <= PER_ENDPOINT, `${receiver.connections()} connections`);
});

/**
 * A receiver that answers the first request of each connection, and resets the connection when a second
 * one arrives on it: as a server does that closes an idle connection just as the client reuses it.
 */
async function closingReceiver(t: TestContext) {
  let resets = 0;
  let answered = 0;
  const server = http.createServer((request, response) => {
    const socket = request.socket as typeof request.socket & { served?: boolean };
    if (socket.served === true) {
      resets += 1;
      socket.resetAndDestroy();
      return;
    }
    socket.served = true;
    request.resume();
    request.on('end', () => {
      answered += 1;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    resets: () => resets,
    answered: () => answered,
  };
}

test('a kept-alive connection the receiver reset before answering is retried on a new one, in the same attempt', async (t) => {
  const h = await startHarness(t, sqlite, OPTIONS);
  const receiver = await closingReceiver(t);
  const endpoint = await register(h, receiver.url);
  for (let i = 1; i <= 3; i++) {
    await h.createPets(1);
    await attempts(h, endpoint, i);
  }
  const log = await attempts(h, endpoint, 3);
  assert.deepEqual(
    log.map((entry) => `${entry.status}/${entry.attempt}`),
    ['succeeded/1', 'succeeded/1', 'succeeded/1'],
  );
  assert.equal(receiver.answered(), 3);
  assert.ok(receiver.resets() >= 1, 'a reused connection was reset');
});
