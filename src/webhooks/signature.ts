import { createHmac, createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../domain/webhook-secret.js';
import { PRIVATE_KEY_PREFIX } from '../domain/webhook-signature.js';
import type { SigningSecrets } from '../store/webhook-endpoint-records.js';

/**
 * The secrets an attempt started at `at` is signed with: the endpoint's, then the one its last rotation
 * replaced while that still signs, so a receiver holding either verifies during the overlap.
 */
export function signingSecrets({ secret, previousSecret }: SigningSecrets, at: Date): string[] {
  return previousSecret !== null && at < previousSecret.expiresAt ? [secret, previousSecret.secret] : [secret];
}

/** Parsed Ed25519 keys by their secret, so an attempt does not parse its DER again; bounded, oldest out first. */
const privateKeys = new Map<string, KeyObject>();
const PRIVATE_KEYS_KEPT = 10_000;

function privateKey(secret: string): KeyObject {
  let key = privateKeys.get(secret);
  if (key === undefined) {
    const der = Buffer.from(secret.slice(PRIVATE_KEY_PREFIX.length), 'base64');
    key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    if (privateKeys.size >= PRIVATE_KEYS_KEPT) privateKeys.delete(privateKeys.keys().next().value ?? '');
    privateKeys.set(secret, key);
  }
  return key;
}

/**
 * One signature of Standard Webhooks' signed content "{id}.{timestamp}.{body}", by the secret's kind: `v1,` + the
 * base64 HMAC-SHA256 keyed with a `whsec_` secret's bytes (the base64 after the prefix), or `v1a,` + the base64
 * Ed25519 signature made with a `whsk_` private key (src/domain/webhook-signature.ts).
 */
function signWith(secret: string, content: string): string {
  if (secret.startsWith(PRIVATE_KEY_PREFIX)) {
    return `v1a,${sign(null, Buffer.from(content), privateKey(secret)).toString('base64')}`;
  }
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

/**
 * The headers of one Standard Webhooks attempt (standardwebhooks.com): the event id, this attempt's time in
 * Unix seconds, and a signature per secret (signWith); several are separated by spaces, as the specification
 * provides for rotation, and a receiver accepts the attempt when any one it can check verifies. A new attempt
 * is signed anew, with its own timestamp.
 */
export function webhookHeaders(secrets: readonly string[], id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const content = `${id}.${timestamp}.${body}`;
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map((secret) => signWith(secret, content)).join(' '),
  };
}
