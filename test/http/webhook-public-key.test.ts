import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import type { Received } from '../../dev/webhook-receiver.js';
import { loggerOptions } from '../../src/process/log-stream.js';
import { type CallResult, expectError } from '../helpers/calls.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createEndpoint, hmacVerifies, startWebhookHarness, verifiedBy } from '../helpers/webhooks.js';

/**
 * Public-key signatures (docs/decisions/public-key-signatures.md), black-box: endpoints signed with Ed25519 over
 * HTTP, each delivery checked with Node's crypto.verify against the public key the endpoint shows, and the
 * private key, read from the database, found in no answer and no log line.
 */

const DAY_MS = 86_400_000;
const PUBLIC_KEY = /^whpk_[A-Za-z0-9+/]{43}=$/;

const versions = (request: Received | undefined) =>
  request?.headers['webhook-signature']?.split(' ').map((versioned) => versioned.split(',')[0]);

/** Every spelling of an endpoint's private key that could leak: as kept, its DER's base64, its PEM, its seed. */
async function privateKeyForms(h: Harness, id: number): Promise<string[]> {
  const [row] = await h.sql(`SELECT secret FROM webhook_endpoints WHERE id = ${id}`);
  const kept = String(row?.secret);
  assert.match(kept, /^whsk_/);
  const der = kept.slice('whsk_'.length);
  const key = createPrivateKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'pkcs8' });
  const pemBody = String(key.export({ type: 'pkcs8', format: 'pem' })).split('\n')[1] ?? '';
  const seed = key.export({ format: 'jwk' }).d ?? '';
  return [kept, der, pemBody, seed, Buffer.from(seed, 'base64url').toString('base64')];
}

function logLines() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

eachBackend((backend) => {
  describe(`public-key webhook signatures [${backend.name}]`, () => {
    test('Ed25519: the public key shown, never a secret; every delivery verifies; rotations sign twice', async (t) => {
      const { lines, stream } = logLines();
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: 1000, retrySchedule: [100, 200] },
        logger: { ...loggerOptions('debug'), stream },
      });
      const answers: CallResult[] = [];
      const call = async (method: string, path: string, body?: unknown) => {
        const result = await h.call(method, path, body === undefined ? {} : { body });
        answers.push(result);
        return result;
      };
      const receiver = await startReceiver(t);
      const body = { url: receiver.url, events: ['pet.created'], signature: 'ed25519' };
      const created = await call('POST', '/v1/webhooks', body);
      assert.equal(created.status, 201, created.text);
      const { id, publicKey } = created.json;
      assert.match(publicKey, PUBLIC_KEY);
      assert.equal(created.json.signature, 'ed25519');
      assert.equal(created.json.previousPublicKey, null);
      assert.ok(!('secret' in created.json), 'no shared secret exists');
      const { json: shown } = await call('GET', `/v1/webhooks/${id}`);
      assert.deepEqual(shown, created.json);
      assert.deepEqual((await call('GET', '/v1/webhooks')).json, [created.json]);

      await h.createPets(2);
      await receiver.until((got) => got.length === 2, 5000);
      for (const request of receiver.received) {
        assert.deepEqual(versions(request), ['v1a']);
        assert.equal(verifiedBy(publicKey, request), 1, 'verifies with the public key shown');
      }
      const firstKey = await privateKeyForms(h, id);

      // A rotation: a new key pair, both sign during the overlap, each verifying with its own public key.
      const rotated = await call('POST', `/v1/webhooks/${id}/rotate-secret`);
      assert.equal(rotated.status, 200, rotated.text);
      assert.deepEqual(Object.keys(rotated.json).sort(), [
        'previousPublicKey',
        'previousSecretExpiresAt',
        'publicKey',
        'signature',
      ]);
      assert.match(rotated.json.publicKey, PUBLIC_KEY);
      assert.notEqual(rotated.json.publicKey, publicKey);
      assert.equal(rotated.json.previousPublicKey, publicKey);
      assert.ok(Date.parse(rotated.json.previousSecretExpiresAt) > Date.now() + DAY_MS - 60_000, 'a day');
      const after = (await call('GET', `/v1/webhooks/${id}`)).json;
      assert.deepEqual(
        [after.publicKey, after.previousPublicKey, after.previousSecretExpiresAt],
        [rotated.json.publicKey, publicKey, rotated.json.previousSecretExpiresAt],
      );
      await h.createPets(1);
      await receiver.until((got) => got.length === 3, 5000);
      const overlap = receiver.received[2];
      assert.deepEqual(versions(overlap), ['v1a', 'v1a']);
      assert.equal(verifiedBy(rotated.json.publicKey, overlap), 1, 'the new key verifies one');
      assert.equal(verifiedBy(publicKey, overlap), 1, 'previousPublicKey verifies the other');

      const secondKey = await privateKeyForms(h, id);
      for (const form of [...firstKey, ...secondKey]) {
        assert.ok(form.length >= 40, form);
        for (const answer of answers) assert.ok(!answer.text.includes(form), 'no answer shows the private key');
        assert.ok(!lines.some((line) => line.includes(form)), 'no log line holds the private key');
      }
      assert.ok(lines.length > 10, 'the log was captured');
    });

    test('PATCH signature: a change of kind is a rotation; the same kind changes nothing', async (t) => {
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: 1000, retrySchedule: [100, 200] },
      });
      const receiver = await startReceiver(t);
      const { id, secret } = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      const delivered = async (n: number) => {
        await h.createPets(1);
        await receiver.until((got) => got.length === n, 5000);
        return receiver.received[n - 1];
      };
      assert.deepEqual(versions(await delivered(1)), ['v1'], 'HMAC by default');

      // To Ed25519: the HMAC secret keeps signing beside the key pair for a day, so no delivery is missed.
      const before = Date.now();
      const toEd25519 = await h.call('PATCH', `/v1/webhooks/${id}`, { body: { signature: 'ed25519' } });
      assert.equal(toEd25519.status, 200, toEd25519.text);
      const { publicKey } = toEd25519.json;
      assert.match(publicKey, PUBLIC_KEY);
      assert.deepEqual([toEd25519.json.signature, toEd25519.json.previousPublicKey], ['ed25519', null]);
      assert.ok(!('secret' in toEd25519.json));
      assert.ok(Date.parse(toEd25519.json.previousSecretExpiresAt) >= before + DAY_MS - 1000);
      const switched = await delivered(2);
      assert.deepEqual(versions(switched), ['v1a', 'v1']);
      assert.equal(verifiedBy(publicKey, switched), 1);
      assert.ok(hmacVerifies(secret, switched), 'a receiver still on the HMAC secret verifies');
      const again = await h.call('PATCH', `/v1/webhooks/${id}`, { body: { signature: 'ed25519' } });
      assert.deepEqual(again.json, toEd25519.json, 'the same kind: no new key');

      // Back to HMAC: the new secret is shown in this answer alone; the Ed25519 key signs beside it meanwhile.
      const toHmac = await h.call('PATCH', `/v1/webhooks/${id}`, { body: { signature: 'hmac', description: 'back' } });
      assert.equal(toHmac.status, 200, toHmac.text);
      assert.match(toHmac.json.secret, /^whsec_/);
      assert.notEqual(toHmac.json.secret, secret);
      assert.deepEqual(
        [toHmac.json.signature, toHmac.json.publicKey, toHmac.json.previousPublicKey, toHmac.json.description],
        ['hmac', null, publicKey, 'back'],
      );
      const shown = await h.call('GET', `/v1/webhooks/${id}`);
      const { secret: _, ...withoutSecret } = toHmac.json;
      assert.deepEqual(shown.json, withoutSecret);
      const back = await delivered(3);
      assert.deepEqual(versions(back), ['v1', 'v1a']);
      assert.ok(hmacVerifies(toHmac.json.secret, back));
      assert.equal(verifiedBy(publicKey, back), 1);
      const same = await h.call('PATCH', `/v1/webhooks/${id}`, { body: { signature: 'hmac' } });
      assert.deepEqual(same.json, withoutSecret, 'no secret made, none shown');
    });

    test('bad values of signature are 400 naming the field; the document lists the kinds', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { id } = await createEndpoint(h);
      for (const signature of ['rsa', 'ED25519', '', null, 1]) {
        const created = await h.call('POST', '/v1/webhooks', {
          body: { url: 'https://hooks.example.com/in', signature },
        });
        assert.match(expectError(created, 400, 'invalid_request'), /^body\.signature /, String(signature));
        const changed = await h.call('PATCH', `/v1/webhooks/${id}`, { body: { signature } });
        assert.match(expectError(changed, 400, 'invalid_request'), /^body\.signature /, String(signature));
      }
      assert.equal(
        expectError(
          await h.call('PATCH', `/v1/webhooks/${id}`, { body: { signature: 'rsa' } }),
          400,
          'invalid_request',
        ),
        'body.signature must be one of: hmac, ed25519',
      );
      assert.equal((await h.call('GET', `/v1/webhooks/${id}`)).json.signature, 'hmac', 'nothing changed');
      const doc = (await h.call('GET', '/v1/openapi.json')).json;
      const { schemas } = doc.components;
      assert.deepEqual(schemas.NewWebhookEndpoint.properties.signature.enum, ['hmac', 'ed25519']);
      assert.deepEqual(schemas.WebhookEndpointChange.properties.signature.enum, ['hmac', 'ed25519']);
      for (const name of [
        'WebhookEndpoint',
        'CreatedWebhookEndpoint',
        'ChangedWebhookEndpoint',
        'RotatedWebhookSecret',
      ]) {
        for (const field of ['signature', 'publicKey', 'previousPublicKey']) {
          assert.ok(schemas[name].required.includes(field), `${name}.${field}`);
        }
      }
      assert.ok(!schemas.CreatedWebhookEndpoint.required.includes('secret'), 'an Ed25519 endpoint has none');
    });
  });
});
