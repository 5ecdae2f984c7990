import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format, GitHub-style: a recognisable prefix, 30 base62 characters of randomness (≈178 bits)
 * and a 6-character base62 CRC32 checksum, so secret scanners can spot keys and typos are refused
 * before any lookup. Only the SHA-256 of a key is ever stored.
 */
const KEY_PREFIX = 'psk_';
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;
const KEY_LENGTH = KEY_PREFIX.length + RANDOM_CHARS + CHECKSUM_CHARS;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECKSUM_CHARS}}$`);

/**
 * `read`: pets, orders, the feed; `write`: create pets, place and change orders; `webhooks`: its owner's
 * webhook endpoints; `admin`: every owner's endpoints (and so `webhooks` too).
 */
export const SCOPES = ['read', 'write', 'webhooks', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What `keys create` gives a key unless told otherwise: everything but other owners' endpoints. */
export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'webhooks', 'write'];

/** Whether a key is in force at `now`: neither revoked nor past its expiry. */
export function isActive(
  key: { readonly revokedAt: Date | null; readonly expiresAt: Date | null },
  now: Date,
): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now);
}

/** Whether a key with these scopes may do what `needed` allows: `admin` implies `webhooks`. */
export function grants(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.includes(needed) || (needed === 'webhooks' && scopes.includes('admin'));
}

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_CHARS);
}

export function generateApiKey(): string {
  let random = '';
  for (let i = 0; i < RANDOM_CHARS; i++) random += BASE62[randomInt(62)];
  return KEY_PREFIX + random + checksum(KEY_PREFIX + random);
}

/** True when the text has the key's shape and its checksum matches: cheap, and needs no lookup. */
export function isWellFormedApiKey(text: string): boolean {
  if (text.length !== KEY_LENGTH || !KEY_SHAPE.test(text)) return false;
  const body = text.slice(0, KEY_LENGTH - CHECKSUM_CHARS);
  return checksum(body) === text.slice(KEY_LENGTH - CHECKSUM_CHARS);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The part of a key that may be shown again (in `keys list`) to tell keys apart. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

export function parseScopes(text: string): Scope[] {
  const scopes = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (scopes.length === 0) throw new Error(`--scopes needs at least one of: ${SCOPES.join(', ')}`);
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new Error(`unknown scope "${scope}"; scopes are: ${SCOPES.join(', ')}`);
    }
  }
  return [...new Set(scopes as Scope[])].sort();
}
