import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Received } from '../../dev/webhook-receiver.js';
import type { Lookup } from '../../src/webhooks/target-policy.js';
import { expectError } from '../helpers/calls.js';
import { type Harness, type HarnessOptions, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createEndpoint, hmacVerifies, startWebhookHarness, testLookup } from '../helpers/webhooks.js';

/**
 * Secret rotation, black-box: rotations over HTTP, and which secrets verify what a local receiver gets,
 * checked by the `standardwebhooks` package.
 */

const DAY_MS = 86_400_000;
/** Retries after 100 ms then 200 ms. */
const FAST: HarnessOptions = {
  webhooks: { allowPrivateUrls: true },
  webhookDelivery: { timeoutMs: 1000, retrySchedule: [100, 200] },
};

async function rotate(h: Harness, id: number, body?: unknown) {
  const result = await h.call('POST', `/v1/webhooks/${id}/rotate-secret`, body === undefined ? {} : { body });
  assert.equal(result.status, 200, result.text);
  assert.deepEqual(Object.keys(result.json).sort(), [
    'previousPublicKey',
    'previousSecretExpiresAt',
    'publicKey',
    'secret',
    'signature',
  ]);
  return result.json as { secret: string; previousSecretExpiresAt: string | null };
}

const signatures = (request: Received | undefined) => request?.headers['webhook-signature']?.split(' ').length;

eachBackend((backend) => {
  describe(`webhook secret rotation [${backend.name}]`, () => {
    test('a new secret, shown once; the endpoint shows until when the old one signs, never a secret', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const created = await createEndpoint(h);
      assert.equal(created.previousSecretExpiresAt, null);
      const before = Date.now();
      const rotated = await rotate(h, created.id);
      assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.notEqual(rotated.secret, created.secret);
      const expiresAt = Date.parse(rotated.previousSecretExpiresAt as string);
      assert.ok(expiresAt >= before + DAY_MS && expiresAt <= Date.now() + DAY_MS, 'a day by default');
      const shown = await h.call('GET', `/v1/webhooks/${created.id}`);
      const { secret: _, ...unchanged } = created;
      assert.deepEqual(shown.json, { ...unchanged, previousSecretExpiresAt: rotated.previousSecretExpiresAt });
      assert.doesNotMatch(shown.text, /whsec_/);
      assert.doesNotMatch((await h.call('GET', '/v1/webhooks')).text, /whsec_/);

      const week = await rotate(h, created.id, { previousSecretExpiresIn: 604_800 });
      assert.ok(Date.parse(week.previousSecretExpiresAt as string) >= before + 7 * DAY_MS);
      const atOnce = await rotate(h, created.id, { previousSecretExpiresIn: 0 });
      assert.equal(atOnce.previousSecretExpiresAt, null);
      assert.equal((await h.call('GET', `/v1/webhooks/${created.id}`)).json.previousSecretExpiresAt, null);
      assert.notEqual(atOnce.secret, week.secret);
    });

    test('bad bodies are 400 naming the field; unknown or deleted endpoints 404; disabled ones rotate', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { id } = await createEndpoint(h);
      const path = `/v1/webhooks/${id}/rotate-secret`;
      for (const previousSecretExpiresIn of [-1, 604_801, 1.5, '60', null]) {
        const message = expectError(
          await h.call('POST', path, { body: { previousSecretExpiresIn } }),
          400,
          'invalid_request',
        );
        assert.match(message, /^body\.previousSecretExpiresIn /, `${previousSecretExpiresIn}: ${message}`);
      }
      assert.match(
        expectError(await h.call('POST', path, { body: { expiresIn: 5 } }), 400, 'invalid_request'),
        /expiresIn/,
      );
      expectError(await h.call('POST', path, { body: [] }), 400, 'invalid_request');
      // White space is a body, and no JSON (an empty one is no body: webhook-test-send.test.ts).
      expectError(
        await h.call('POST', path, { body: ' ', headers: { 'content-type': 'application/json' } }),
        400,
        'invalid_request',
      );
      expectError(await h.call('POST', path, { key: h.keys.read }), 403, 'forbidden');
      expectError(await h.call('POST', `/v1/webhooks/${id + 1}/rotate-secret`), 404, 'not_found');
      assert.equal((await h.call('GET', `/v1/webhooks/${id}`)).json.previousSecretExpiresAt, null, 'nothing rotated');

      assert.equal((await h.call('PATCH', `/v1/webhooks/${id}`, { body: { enabled: false } })).status, 200);
      const rotated = await rotate(h, id);
      assert.equal(
        (await h.call('GET', `/v1/webhooks/${id}`)).json.previousSecretExpiresAt,
        rotated.previousSecretExpiresAt,
      );
      assert.equal((await h.call('DELETE', `/v1/webhooks/${id}`)).status, 204);
      expectError(await h.call('POST', path), 404, 'not_found');
    });

    test('the document: the body may be left out, the answer is the secret and the overlap', async (t) => {
      const h = await startHarness(t, backend);
      const doc = (await h.call('GET', '/v1/openapi.json')).json;
      const operation = doc.paths['/webhooks/{webhookId}/rotate-secret'].post;
      assert.equal(operation.operationId, 'rotateWebhookSecret');
      assert.equal(operation.requestBody.required, false);
      assert.equal(doc.paths['/webhooks/{webhookId}'].patch.requestBody.required, true, 'only where the route says');
      const rotation = doc.components.schemas.WebhookSecretRotation.properties.previousSecretExpiresIn;
      assert.deepEqual([rotation.minimum, rotation.maximum], [0, 604_800]);
      assert.deepEqual(Object.keys(operation.responses).slice(0, 1), ['200']);
      assert.ok('previousSecretExpiresAt' in doc.components.schemas.WebhookEndpoint.properties);
    });

    test('during the overlap a receiver holding either secret verifies; after it, only the new one', async (t) => {
      const h = await startHarness(t, backend, FAST);
      const receiver = await startReceiver(t);
      const { id, secret: first } = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      const delivered = async (n: number) => {
        await h.createPets(1);
        await receiver.until((got) => got.length === n, 5000);
        return receiver.received[n - 1];
      };
      const before = await delivered(1);
      assert.equal(signatures(before), 1);
      assert.ok(hmacVerifies(first, before));

      // Rotated on another instance: every instance signs with what the database holds.
      const other = await h.startInstance();
      const { secret: second } = await rotate(other, id);
      const overlap = await delivered(2);
      assert.equal(signatures(overlap), 2);
      assert.ok(hmacVerifies(first, overlap), 'a receiver with only the old secret');
      assert.ok(hmacVerifies(second, overlap), 'a receiver with only the new secret');

      // Within the overlap: the new secret and the one it replaced sign; the first no longer does.
      const { secret: third } = await rotate(h, id);
      const replaced = await delivered(3);
      assert.equal(signatures(replaced), 2);
      assert.ok(hmacVerifies(third, replaced) && hmacVerifies(second, replaced));
      assert.ok(!hmacVerifies(first, replaced), 'at most two secrets sign');

      // After the overlap: the new secret alone.
      const { secret: fourth, previousSecretExpiresAt } = await rotate(h, id, { previousSecretExpiresIn: 1 });
      await sleep(Date.parse(previousSecretExpiresAt as string) - Date.now() + 50);
      const after = await delivered(4);
      assert.equal(signatures(after), 1);
      assert.ok(hmacVerifies(fourth, after));
      assert.ok(!hmacVerifies(third, after), 'the previous secret no longer signs');
    });

    test('a rotation while attempts wait to connect: each is signed with the secrets of when it is sent', async (t) => {
      // The receiver's name resolves slowly once asked to: attempts claimed before a rotation connect after it.
      let resolving: (() => void) | undefined;
      let slow = false;
      const lookup: Lookup = async (hostname) => {
        if (hostname !== 'slow.example.test') return testLookup(hostname);
        if (slow) {
          resolving?.();
          await sleep(700);
        }
        return [{ address: '127.0.0.1' }];
      };
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true, lookup },
        webhookDelivery: { timeoutMs: 5000, retrySchedule: [100] },
      });
      const receiver = await startReceiver(t);
      const url = `http://slow.example.test:${receiver.port}/in`;
      const { id, secret: old } = await createEndpoint(h, { url, events: ['pet.created'] });
      slow = true;
      const connecting = new Promise<void>((resolve) => {
        resolving = resolve;
      });
      await h.createPets(3);
      await connecting;
      // No overlap: from now on only the new secret signs.
      const { secret: fresh } = await rotate(h, id, { previousSecretExpiresIn: 0 });
      await receiver.until((got) => got.length >= 3, 5000);
      for (const request of receiver.received) {
        assert.equal(signatures(request), 1);
        assert.ok(hmacVerifies(fresh, request), 'sent after the rotation: the new secret signs it');
        assert.ok(!hmacVerifies(old, request), 'and the old one no longer does');
      }
    });

    test('a rotation while an attempt is in flight: each attempt verifies with the secret held', async (t) => {
      const h = await startHarness(t, backend, FAST);
      let rotated: Promise<{ secret: string }> | undefined;
      const receiver = await startReceiver(t, (n) => {
        // The first attempt waits out a rotation, then fails: its retry follows the rotation.
        if (n === 0) rotated = rotate(h, id);
        return n === 0 ? { status: 500, delayMs: 300 } : { status: 204 };
      });
      const { id, secret: old } = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      await h.createPets(1);
      await receiver.until((got) => got.length === 2, 5000);
      const { secret: fresh } = await (rotated as Promise<{ secret: string }>);
      const [inFlight, retry] = receiver.received;
      assert.equal(signatures(inFlight), 1);
      assert.ok(hmacVerifies(old, inFlight), 'signed before the rotation, with the secret the receiver held then');
      assert.equal(signatures(retry), 2);
      assert.ok(hmacVerifies(old, retry) && hmacVerifies(fresh, retry), 'the retry: either secret');
      assert.equal(new Set(receiver.ids()).size, 1);
    });
  });
});
