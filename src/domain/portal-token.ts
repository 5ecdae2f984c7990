import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The portal's signed tokens: a link's (in the URL fragment, traded once) and a session's (the cookie).
 * Each is `<payload>.<signature>`, base64url, the signature an HMAC-SHA256 of the kind and the payload, so
 * neither can be altered nor passed off as the other. They carry no secret: what they grant is checked
 * against the key that made them at every use (revoked, expired) and against the clock.
 */
export type PortalTokenKind = 'link' | 'session';

export interface PortalGrant {
  /** The owner whose endpoints it opens. */
  readonly owner: string;
  /** The key that made the link: revoking it ends the link and its sessions. */
  readonly keyId: number;
  readonly expiresAt: Date;
  /** Tells links apart, so each is traded once. */
  readonly nonce: string;
}

interface Payload {
  o: string;
  k: number;
  e: number;
  n: string;
}

function signature(secret: Buffer, kind: PortalTokenKind, payload: string): Buffer {
  return createHmac('sha256', secret).update(`${kind}.${payload}`).digest();
}

export function newNonce(): string {
  return randomBytes(16).toString('base64url');
}

export function signPortalToken(secret: Buffer, kind: PortalTokenKind, grant: PortalGrant): string {
  const body: Payload = { o: grant.owner, k: grant.keyId, e: grant.expiresAt.getTime(), n: grant.nonce };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${payload}.${signature(secret, kind, payload).toString('base64url')}`;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{1,512}\.[A-Za-z0-9_-]{43}$/;

/** The grant of a well-signed token of this kind (its time not checked here); undefined for anything else. */
export function readPortalToken(secret: Buffer, kind: PortalTokenKind, token: string): PortalGrant | undefined {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const [payload = '', signed = ''] = token.split('.');
  const expected = signature(secret, kind, payload);
  const given = Buffer.from(signed, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Payload;
  return { owner: body.o, keyId: body.k, expiresAt: new Date(body.e), nonce: body.n };
}
