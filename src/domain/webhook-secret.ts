import { randomBytes } from 'node:crypto';

/** Standard Webhooks' secret format: the prefix, then the base64 of the key the signatures are made with. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** 256 bits, the size of HMAC-SHA256's block-sized key (the specification asks for 24 to 64 bytes). */
const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}
