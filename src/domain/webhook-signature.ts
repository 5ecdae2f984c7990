import { generateKeyPairSync } from 'node:crypto';
import { generateWebhookSecret } from './webhook-secret.js';

/**
 * How an endpoint's deliveries are signed (Standard Webhooks): `hmac`, `v1,` with a shared `whsec_` secret the
 * receiver holds too; `ed25519`, `v1a,` with a private key only the service holds, verified with its public key
 * (docs/decisions/public-key-signatures.md).
 */
export const WEBHOOK_SIGNATURES = ['hmac', 'ed25519'] as const;
export type WebhookSignature = (typeof WEBHOOK_SIGNATURES)[number];

/** What an endpoint registered without `signature` gets, and what the endpoints from before it have. */
export const DEFAULT_WEBHOOK_SIGNATURE: WebhookSignature = 'hmac';

/** Standard Webhooks' prefix of an Ed25519 public key, shown as `whpk_` + the base64 of its 32 raw bytes. */
export const PUBLIC_KEY_PREFIX = 'whpk_';
/**
 * The prefix of a kept Ed25519 private key (`whsk_` + the base64 of its PKCS #8 DER), never shown: the signer
 * tells the kind of a signing secret by it, as it tells an HMAC secret by `whsec_`.
 */
export const PRIVATE_KEY_PREFIX = 'whsk_';

/** A new signing secret, and the public key that verifies its signatures (null for HMAC: nothing is public). */
export interface SigningKey {
  readonly secret: string;
  readonly publicKey: string | null;
}

export function generateSigningKey(signature: WebhookSignature): SigningKey {
  if (signature === 'hmac') return { secret: generateWebhookSecret(), publicKey: null };
  const pair = generateKeyPairSync('ed25519');
  const der = pair.privateKey.export({ type: 'pkcs8', format: 'der' });
  // JWK's `x` is the raw 32-byte public key, in base64url.
  const raw = Buffer.from(pair.publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  return { secret: PRIVATE_KEY_PREFIX + der.toString('base64'), publicKey: PUBLIC_KEY_PREFIX + raw.toString('base64') };
}

/** An endpoint's kind of signature, as its public key tells it: only Ed25519 endpoints have one. */
export const signatureOf = (publicKey: string | null): WebhookSignature => (publicKey === null ? 'hmac' : 'ed25519');
