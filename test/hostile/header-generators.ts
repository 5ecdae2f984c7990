import fc from 'fast-check';
import type { Scope } from '../../src/domain/api-key.js';
import type { Operation } from './openapi-operations.js';
import type { World } from './world.js';

// ---------------------------------------------------------------------------------------------------------
// Generators: headers
// ---------------------------------------------------------------------------------------------------------

export interface AuthChoice {
  readonly header: string | undefined;
  /** What the key can do: undefined when the header is not a valid key at all. */
  readonly scopes: readonly Scope[] | undefined;
}

/** Deterministic junk of a given length from a small alphabet (latin1 characters). */
export function junk(seed: number, length: number, alphabet: string): string {
  let state = seed >>> 0 || 1;
  let out = '';
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out += alphabet[state % alphabet.length];
  }
  return out;
}
export const VISIBLE_ASCII = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
export const OBS_TEXT = Array.from({ length: 128 }, (_, i) => String.fromCharCode(0x80 + i)).join('');

export function tamper(key: string, at: number): string {
  const i = 4 + (at % (key.length - 4));
  return key.slice(0, i) + (key[i] === 'A' ? 'B' : 'A') + key.slice(i + 1);
}

export function authorization(world: World): fc.Arbitrary<AuthChoice> {
  const { keys } = world.h;
  // The harness's `all` key: every scope but `admin`.
  const both = ['read', 'write', 'webhooks'] as const;
  const invalid = (header: string | undefined): AuthChoice => ({ header, scopes: undefined });
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant<AuthChoice>({ header: `Bearer ${keys.all}`, scopes: both }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<AuthChoice>(
        { header: `bearer ${keys.all}`, scopes: both },
        { header: `BEARER   ${keys.all}`, scopes: both },
        { header: `Bearer ${keys.read}`, scopes: ['read'] },
        { header: `Bearer ${keys.write}`, scopes: ['write'] },
      ),
    },
    { weight: 1, arbitrary: fc.constant(invalid(undefined)) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom(
            'Basic dXNlcjpwYXNz',
            'Bearer',
            'Bearer ',
            `Bearer ${keys.all}x`,
            `Bearer ${keys.all.slice(0, -1)}`,
            keys.all,
            `Bearer ${keys.all}, Bearer ${keys.all}`,
            `Bearer ${keys.all} ${keys.all}`,
            `Bearer psk_${'A'.repeat(36)}`,
            `Bearer ${keys.all.toUpperCase()}`,
            `Token ${keys.all}`,
          ),
          fc.nat().map((at) => `Bearer ${tamper(keys.all, at)}`),
          // 8 KiB of junk: a b64token that is no key, visible ASCII, and obs-text bytes.
          fc
            .tuple(fc.nat(), fc.integer({ min: 7_000, max: 9_000 }))
            .map(([seed, n]) => `Bearer ${junk(seed, n, 'abcXYZ019-._~+/')}`),
          fc
            .tuple(fc.nat(), fc.integer({ min: 7_000, max: 9_000 }))
            .map(([seed, n]) => junk(seed, n, VISIBLE_ASCII).trim() || 'x'),
          fc
            .tuple(fc.nat(), fc.integer({ min: 7_000, max: 9_000 }))
            .map(([seed, n]) => `Bearer ${junk(seed, n, OBS_TEXT)}`),
        )
        .map(invalid),
    },
  );
}

export interface ContentTypeChoice {
  readonly value: string | undefined;
  /** true: a JSON type the service reads; false: a type it must refuse (415); undefined: either is defensible. */
  readonly json: boolean | undefined;
}
export const CONTENT_TYPES: readonly ContentTypeChoice[] = [
  { value: 'application/json', json: true },
  { value: 'application/json; charset=utf-8', json: true },
  { value: 'APPLICATION/JSON', json: undefined },
  { value: 'Application/Json ; Charset="UTF-8"', json: undefined },
  { value: 'application/json;;', json: undefined },
  { value: 'application/json; charset=latin1', json: undefined },
  { value: 'application/json; charset=utf-16', json: undefined },
  { value: 'application/json, text/plain', json: undefined },
  { value: `application/json; x=${'y'.repeat(4000)}`, json: undefined },
  { value: 'application/merge-patch+json', json: undefined },
  { value: 'text/plain', json: false },
  { value: 'text/plain; charset=utf-8', json: false },
  { value: 'application/x-www-form-urlencoded', json: false },
  { value: 'multipart/form-data; boundary=x', json: false },
  { value: 'text/json', json: undefined },
  { value: 'application/jsonx', json: false },
  { value: 'application/problem+json', json: undefined },
  { value: '*/*', json: undefined },
  { value: undefined, json: false },
];
export const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant(CONTENT_TYPES[0] as ContentTypeChoice) },
  { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
);

/**
 * Values for a header parameter of the document: a few short tokens (so retries with the same
 * Idempotency-Key and body replay, and with another body are refused), and hostile ones.
 */
export function headerValue(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('k1', 'k2', '"k1"', 'retry-1') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        '""',
        '"',
        '"k1',
        'k1"',
        '"k\\"1"',
        'k1, k2',
        'k'.repeat(255),
        'k'.repeat(256),
        '\u00e9t\u00e9',
        'a\tb',
        'a\u0001b',
        'a\u007fb',
        '__proto__',
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.nat(), fc.integer({ min: 300, max: 8_000 }))
        .map(([seed, n]) => junk(seed, n, VISIBLE_ASCII).trim() || 'x'),
    },
  );
}

export function headerParameters(operation: Operation): fc.Arbitrary<Array<readonly [string, string]>> {
  return fc
    .tuple(
      ...operation.headerParameters.map((parameter) =>
        fc
          .oneof(
            { weight: 3, arbitrary: fc.constant<string[]>([]) },
            { weight: 3, arbitrary: headerValue().map((v) => [v]) },
            { weight: 1, arbitrary: fc.tuple(headerValue(), headerValue()) },
          )
          .map((values) => values.map((v) => [parameter.name, v] as const)),
      ),
    )
    .map((parts) => parts.flat());
}
