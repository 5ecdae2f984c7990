import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import type { TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Received } from '../../dev/webhook-receiver.js';
import type { Lookup } from '../../src/webhooks/target-policy.js';
import { type Harness, startHarness } from './harness.js';
import type { StoreBackend } from './stores.js';

/** The names the webhook tests use, and what they resolve to; any other name does not resolve. */
const NAMES: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'other.example.com': ['2606:2800:220:1::1'],
  'internal.example.com': ['93.184.216.34', '10.0.0.7'],
  'metadata.example.com': ['169.254.169.254'],
};

/** A resolver without DNS: the tests decide where a name points. */
export const testLookup: Lookup = async (hostname) => {
  const addresses = NAMES[hostname];
  if (addresses === undefined) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  }
  return addresses.map((address) => ({ address }));
};

/** The service with webhooks checked against testLookup; public addresses only unless allowPrivateUrls. */
export function startWebhookHarness(t: TestContext, backend: StoreBackend, allowPrivateUrls = false) {
  return startHarness(t, backend, { webhooks: { allowPrivateUrls, lookup: testLookup } });
}

/** Registers an endpoint over HTTP (201 asserted by the caller's use of it) and returns the body. */
export async function createEndpoint(h: Harness, body: Record<string, unknown> = {}): Promise<any> {
  const result = await h.call('POST', '/v1/webhooks', { body: { url: 'https://hooks.example.com/in', ...body } });
  if (result.status !== 201) throw new Error(`create failed: ${result.status} ${result.text}`);
  return result.json;
}

/** An endpoint's deliveries log over HTTP, newest first: its first 100 attempts (200 asserted). */
export async function deliveryLog(h: Harness, endpoint: number): Promise<any[]> {
  const result = await h.call('GET', `/v1/webhooks/${endpoint}/deliveries?limit=100`);
  if (result.status !== 200) throw new Error(`deliveries log: ${result.status} ${result.text}`);
  return result.json;
}

/** Whether a receiver holding only the HMAC `secret` accepts the request, as the `standardwebhooks` package checks it. */
export function hmacVerifies(secret: string, request: Received | undefined): boolean {
  assert.ok(request, 'the request arrived');
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
}

/** The `v1a` signatures of a request that verify with `publicKey` (whpk_ + base64 of the raw 32 bytes). */
export function verifiedBy(publicKey: string, request: Received | undefined): number {
  assert.ok(request, 'the request arrived');
  const x = Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  const signed = Buffer.from(
    `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`,
  );
  return (request.headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((versioned) => versioned.startsWith('v1a,'))
    .filter((versioned) => verify(null, signed, key, Buffer.from(versioned.slice('v1a,'.length), 'base64'))).length;
}

/** A metric series summed over instances' /metrics (0 where an instance has none yet). */
export async function counted(instances: readonly Harness[], series: string): Promise<number> {
  let sum = 0;
  for (const instance of instances) {
    const text = (await instance.call('GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    sum += Number(line?.split(' ')[1] ?? 0);
  }
  return sum;
}
