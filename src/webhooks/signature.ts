import { createHmac } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../domain/webhook-secret.js';

/**
 * The headers of one Standard Webhooks attempt (standardwebhooks.com): the event id, this attempt's time in
 * Unix seconds, and `v1,` + the base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the secret's
 * bytes (the base64 after `whsec_`). A new attempt is signed anew, with its own timestamp.
 */
export function webhookHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
