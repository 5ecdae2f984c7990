import { randomBytes } from 'node:crypto';

/** Standard Webhooks' secret format: the prefix, then the base64 of the key the signatures are made with. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** 256 bits, the size of HMAC-SHA256's block-sized key (the specification asks for 24 to 64 bytes). */
const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * How long the secret a rotation replaces keeps signing beside the new one, in seconds: a day unless asked,
 * a week at most (long enough for a receiver's release, short enough that a leaked secret dies soon).
 */
export const PREVIOUS_SECRET_SECONDS = { default: 86_400, max: 604_800 } as const;
