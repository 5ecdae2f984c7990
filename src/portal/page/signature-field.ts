import type { WebhookSignature } from './api-types.js';
import type { Choices } from './choice-field.js';
import { SIGNATURE_WORDS, WEBHOOK_SIGNATURES } from './webhook-signatures.js';

/** The signature's control on the forms that create and change an endpoint. */

export const SIGNATURES: Choices<WebhookSignature> = {
  values: WEBHOOK_SIGNATURES,
  words: (signature) => SIGNATURE_WORDS[signature],
  hint:
    'HMAC: your receiver checks signatures with a secret shown once, which could also sign. Ed25519: it checks ' +
    'them with a public key shown on the endpoint, which cannot sign. Changing it signs with both for a day.',
};
