import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import type { Answer } from '../../dev/webhook-receiver.js';
import { loggerOptions } from '../../src/process/log-stream.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * What the receiver answered, in the deliveries log: each attempt's duration, and the first 4 KiB of the
 * answer's body (docs/decisions/delivery-answers.md), never in the service's own log lines.
 */

const TIMEOUT_MS = 1000;
/** Found in one answer's body only: it must reach the deliveries log, and no log line. */
const DISTINCTIVE = 'zq-receiver-words-7731';

/** The first entry of an endpoint's deliveries log, once there is one. */
const firstEntry = (h: Harness, endpoint: number) =>
  eventually(`endpoint ${endpoint}'s first attempt`, async () => {
    const result = await h.call('GET', `/v1/webhooks/${endpoint}/deliveries`);
    assert.equal(result.status, 200, result.text);
    return (result.json as any[])[0];
  });

eachBackend((backend) => {
  describe(`what the receiver answered [${backend.name}]`, () => {
    test('status, body (cut at 4 KiB, or described when not text) and duration; never logged', async (t) => {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk, _encoding, done) {
          lines.push(...String(chunk).split('\n').filter(Boolean));
          done();
        },
      });
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: TIMEOUT_MS, retrySchedule: [60_000] },
        logger: { ...loggerOptions('info'), stream },
      });
      // 10,001 bytes: 4096 keep "x" and 2047 "é", and the first byte of the next "é", which is dropped.
      const long = `x${'é'.repeat(5000)}`;
      const answers: Record<string, Answer> = {
        slow: () => ({ status: 422, body: `{"error":"${DISTINCTIVE}"}`, delayMs: 150 }),
        long: () => ({ status: 500, body: long }),
        binary: () => ({ status: 400, body: Buffer.from([0x00, 0xff, 0x10, 0x80, 0x41]) }),
        empty: () => ({ status: 204 }),
        hanging: () => 'hang',
      };
      const endpoints: Record<string, number> = {};
      for (const [name, answer] of Object.entries(answers)) {
        const receiver = await startReceiver(t, answer);
        const created = await h.call('POST', '/v1/webhooks', { body: { url: receiver.url, events: ['pet.created'] } });
        assert.equal(created.status, 201, created.text);
        endpoints[name] = (created.json as { id: number }).id;
      }
      await h.createPets(1);
      const entry = async (name: string) => firstEntry(h, endpoints[name] as number);

      const slow = await entry('slow');
      assert.deepEqual(
        [slow.responseStatus, slow.error, slow.responseBody, slow.responseBodyTruncated],
        [422, 'answered 422', `{"error":"${DISTINCTIVE}"}`, undefined],
      );
      assert.ok(slow.durationMs >= 150 && slow.durationMs < TIMEOUT_MS, `slow: ${slow.durationMs} ms`);

      const cut = await entry('long');
      assert.deepEqual(
        [cut.responseStatus, cut.responseBody, cut.responseBodyTruncated],
        [500, `x${'é'.repeat(2047)}`, true],
      );
      assert.equal(Number.isInteger(cut.durationMs), true);

      const binary = await entry('binary');
      assert.deepEqual([binary.responseStatus, binary.responseBody], [400, '<5 bytes, not text>']);
      assert.equal(binary.responseBodyTruncated, undefined);

      const empty = await entry('empty');
      assert.deepEqual([empty.status, empty.responseStatus, empty.responseBody], ['succeeded', 204, undefined]);
      assert.equal(Number.isInteger(empty.durationMs), true);

      const hanging = await entry('hanging');
      assert.deepEqual(
        [hanging.error, hanging.responseStatus, hanging.responseBody],
        [`no answer within ${TIMEOUT_MS} ms`, undefined, undefined],
      );
      // About the time-out; a generous ceiling above it, for a busy machine.
      assert.ok(
        hanging.durationMs >= TIMEOUT_MS - 5 && hanging.durationMs < TIMEOUT_MS + 5000,
        `${hanging.durationMs} ms`,
      );

      // The attempts were logged (with their durations), but none of the receiver's words.
      // Logged once recorded: a moment after the deliveries log shows them.
      const logged = await eventually('the 5 attempts logged', async () => {
        const attempts = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'webhook attempt');
        return attempts.length >= 5 ? attempts : undefined;
      });
      assert.ok(logged.every((line) => Number.isInteger(line.durationMs)));
      assert.deepEqual(
        lines.filter((line) => line.includes(DISTINCTIVE)),
        [],
      );
    });

    test('a small answer read to its end keeps the connection for the next attempt', async (t) => {
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: TIMEOUT_MS, retrySchedule: [100, 100] },
      });
      const receiver = await startReceiver(t, () => ({ status: 422, body: 'no such pet here' }));
      const created = await h.call('POST', '/v1/webhooks', { body: { url: receiver.url, events: ['pet.created'] } });
      assert.equal(created.status, 201, created.text);
      await h.createPets(1);
      const log = await eventually('three attempts, the last failed', async () => {
        const result = await h.call('GET', `/v1/webhooks/${(created.json as { id: number }).id}/deliveries`);
        const entries = result.json as any[];
        return entries.length === 3 && entries[0].status === 'failed' ? entries : undefined;
      });
      assert.deepEqual(
        log.map((entry) => entry.responseBody),
        ['no such pet here', 'no such pet here', 'no such pet here'],
      );
      assert.equal(receiver.connections(), 1, 'one connection, kept alive');
    });
  });
});
