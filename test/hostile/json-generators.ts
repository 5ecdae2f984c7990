import fc from 'fast-check';
import { BODY_LIMIT } from './settings.js';

// ---------------------------------------------------------------------------------------------------------
// Generators: JSON text, values, strings
// ---------------------------------------------------------------------------------------------------------

/** JSON as text parts: raw literals (int64 edges, escapes, deep nesting), duplicate keys, `__proto__` as a key. */
export type Json =
  | { readonly kind: 'raw'; readonly text: string }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'array'; readonly items: readonly Json[] }
  | { readonly kind: 'object'; readonly entries: ReadonlyArray<readonly [string, Json]> };

export const raw = (text: string): Json => ({ kind: 'raw', text });
export const value = (v: unknown): Json => ({ kind: 'value', value: v });

export function jsonText(json: Json): string {
  switch (json.kind) {
    case 'raw':
      return json.text;
    case 'value':
      // JSON.stringify escapes lone surrogates and control characters: `"\ud800"`, `"\u0000"`.
      return JSON.stringify(json.value) ?? 'null';
    case 'array':
      return `[${json.items.map(jsonText).join(',')}]`;
    case 'object':
      return `{${json.entries.map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`).join(',')}}`;
  }
}

/** A list of tokens separated by white space. */
export function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** int64 and double edge literals, written as the text a client would send. */
export const NUMBER_LITERALS = [
  ...words(`
  0 -0 1 -1 1.0 1.5 1e-7 1E2 1e3 100 101 1000 1001 9007199254740991 9007199254740992
  9007199254740993 -9007199254740991 -9007199254740992 9223372036854775807 9223372036854775808
  -9223372036854775808 -9223372036854775809 18446744073709551616 1e308 -1e308 1e309 4.9e-324 10e-1
`),
  `1${'0'.repeat(399)}`,
  '9'.repeat(401),
];

export const CONTROL = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code));
export const SURROGATE = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
export const hostileChar = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'Z', '0', ' ', '-', 'é', '名', '🐶', 'ß') },
  { weight: 2, arbitrary: CONTROL },
  { weight: 2, arbitrary: SURROGATE },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '\u007f',
      '\u0085',
      '\u009f',
      '\u00a0',
      '\u200b',
      '\u2028',
      '\u2029',
      '\u202e',
      '\u3000',
      '\ufeff',
      '\ufffe',
      '\uffff',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('"', '\\', '/', "'", '<', '>', '&', '%', '{', '}', '[', ']') },
);

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: hostileChar, maxLength: 24 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '__proto__',
      'constructor',
      'prototype',
      'available',
      'AVAILABLE',
      'available ',
      'placed',
      'delivered',
      'null',
      '1',
      'NaN',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(199, 200, 201, 1000).map((n) => 'x'.repeat(n)) },
  // Near the body limit, or over it.
  { weight: 1, arbitrary: fc.integer({ min: BODY_LIMIT - 64, max: BODY_LIMIT + 64 }).map((n) => 'y'.repeat(n)) },
  // A valid name hidden in white space: 1 character after trimming.
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => `${' '.repeat(n)}x`) },
);

/** String literals only raw JSON text can carry: escaped lone surrogates, NUL, invalid escapes, raw controls. */
export const RAW_STRING_LITERALS = [
  '"\\ud800"',
  '"\\uDFFF\\uD800"',
  '"a\\udc00b"',
  '"\\ud83d"',
  '"a\\u0000b"',
  '"\\u001f"',
  '"\\u007f"',
  '"\\/"',
  '"\\x41"',
  '"\\u12"',
  '"\\uZZZZ"',
  '"\t"',
  '"a\nb"',
  '"\u0000"',
  '"\\"',
];

export const NEST_KINDS = ['array', 'object', 'mixed'] as const;
export function nested(kind: (typeof NEST_KINDS)[number], depth: number): string {
  switch (kind) {
    case 'array':
      return `${'['.repeat(depth)}${']'.repeat(depth)}`;
    case 'object':
      return `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`;
    case 'mixed': {
      const half = Math.ceil(depth / 2);
      return `${'[{"__proto__":'.repeat(half)}1${'}]'.repeat(half)}`;
    }
  }
}
export const deepNesting: fc.Arbitrary<Json> = fc
  .tuple(
    fc.constantFrom(...NEST_KINDS),
    fc.oneof(fc.constant(10_000), fc.integer({ min: 100, max: 12_000 }), fc.integer({ min: 20_000, max: 40_000 })),
  )
  .map(([kind, depth]) => raw(nested(kind, depth)));

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      '__defineGetter__',
      'valueOf',
      'id',
      '',
      ' name',
      'Name',
      'categoryid',
      'petid',
      'STATUS',
      '\u0000',
      '\ud800',
      'name\u0000',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: hostileChar, maxLength: 8 }) },
);

export const hostileScalar: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NUMBER_LITERALS).map(raw) },
  { weight: 1, arbitrary: fc.double().map((d) => (Number.isFinite(d) ? value(d) : raw(String(d)))) },
  { weight: 1, arbitrary: fc.integer().map(value) },
  { weight: 3, arbitrary: hostileString.map(value) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_STRING_LITERALS).map(raw) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false).map(value) },
);

export function hostileValueOfDepth(depth: number): fc.Arbitrary<Json> {
  const leaf = fc.oneof({ weight: 12, arbitrary: hostileScalar }, { weight: 1, arbitrary: deepNesting });
  if (depth <= 0) return leaf;
  const inner = hostileValueOfDepth(depth - 1);
  return fc.oneof(
    { weight: 6, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(inner, { maxLength: 3 }).map((items): Json => ({ kind: 'array', items })) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(hostileKey, inner), { maxLength: 3 })
        .map((entries): Json => ({ kind: 'object', entries })),
    },
  );
}
export const hostileValue = hostileValueOfDepth(2);
