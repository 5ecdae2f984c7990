import type { SignatureKeys } from './api-types.js';
import { el, timeElement } from './dom.js';

const publicKeyField = (label: string, key: string) =>
  el('p', { className: 'signature' }, [`${label}: `, el('code', { className: 'public-key', text: key })]);

/**
 * How an endpoint's deliveries are signed. An Ed25519 one shows its public key, which verifies and cannot
 * sign, so it is shown whenever the endpoint is; during a rotation the previous key too, until it stops.
 */
export function signatureLines(keys: SignatureKeys): HTMLElement[] {
  if (keys.publicKey === null) {
    return [
      el('p', { className: 'signature', text: 'Signatures: HMAC (v1), with the secret shown when it was made.' }),
    ];
  }
  const lines = [
    el('p', { className: 'signature', text: 'Signatures: Ed25519 (v1a); verify them with the public key.' }),
    publicKeyField('Public key', keys.publicKey),
  ];
  const until = keys.previousSecretExpiresAt;
  if (keys.previousPublicKey !== null && until !== null && Date.parse(until) > Date.now()) {
    lines.push(publicKeyField('Previous public key', keys.previousPublicKey));
    lines.push(el('p', { className: 'signature' }, ['It also signs every delivery until ', timeElement(until), '.']));
  }
  return lines;
}
