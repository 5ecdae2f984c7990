import type { WebhookSignature } from './api-types.js';

/**
 * How an endpoint's deliveries may be signed: those of src/domain/webhook-signature.ts, repeated because the
 * page is compiled apart from the service and imports nothing of it. test/unit/portal-choices.test.ts
 * holds the two together. The default first, so a form reset shows it.
 */
export const WEBHOOK_SIGNATURES = ['hmac', 'ed25519'] as const satisfies readonly WebhookSignature[];

/** What each is, as the forms say it. */
export const SIGNATURE_WORDS: Readonly<Record<WebhookSignature, string>> = {
  hmac: 'HMAC with a shared secret (v1)',
  ed25519: 'Ed25519 with a public key (v1a)',
};
