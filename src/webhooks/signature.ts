import { createHmac } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../domain/webhook-secret.js';
import type { SigningSecrets } from '../store/webhook-endpoint-records.js';

/**
 * The secrets an attempt started at `at` is signed with: the endpoint's, then the one its last rotation
 * replaced while that still signs, so a receiver holding either verifies during the overlap.
 */
export function signingSecrets({ secret, previousSecret }: SigningSecrets, at: Date): string[] {
  return previousSecret !== null && at < previousSecret.expiresAt ? [secret, previousSecret.secret] : [secret];
}

/**
 * The headers of one Standard Webhooks attempt (standardwebhooks.com): the event id, this attempt's time in
 * Unix seconds, and per secret `v1,` + the base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the
 * secret's bytes (the base64 after `whsec_`); several are separated by spaces, as the specification provides
 * for rotation, and a receiver accepts the attempt when any one verifies. A new attempt is signed anew, with
 * its own timestamp.
 */
export function webhookHeaders(secrets: readonly string[], id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const sign = (secret: string) => {
    const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
    return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  };
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map(sign).join(' '),
  };
}
