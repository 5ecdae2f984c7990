import fc from 'fast-check';
import { hostileChar, hostileString, NUMBER_LITERALS, words } from './json-generators.js';
import type { Operation, Parameter, Schema } from './openapi-operations.js';
import type { World } from './world.js';

// ---------------------------------------------------------------------------------------------------------
// Generators: paths and queries
// ---------------------------------------------------------------------------------------------------------

/** Encodes every byte of the UTF-8 form that is not unreserved (lone surrogates become EF BF BD). */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Path segments as they go on the wire. Invalid UTF-8 escapes and segments over 100 characters have their own tests in paths.test.ts. */
export const HOSTILE_SEGMENTS = [
  ...words(`
  0 -1 -0 1.0 1e3 1e-7 0x10 +1 %2B1 %201 1%20 01 9007199254740991 9007199254740992
  -9007199254740991 -9007199254740992 9223372036854775807 -9223372036854775808
  18446744073709551616 1e308 NaN Infinity %00 1%00 %01 %7F %2e%2e %2E .. . %2F %252F %25 null true
  __proto__ constructor prototype %E2%80%AE1 %EF%BC%91 %C3%A9 %F0%9F%90%B6 1;2 1,2 1%3B2 %5B%5D
  %7B%7D
`),
  '',
  '1'.repeat(100),
  `-${'9'.repeat(99)}`,
];

export function segment(schema: Schema): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: Math.max(1, schema.minimum ?? 1), max: 10 }).map(String) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
    { weight: 1, arbitrary: fc.constantFrom(...NUMBER_LITERALS.filter((n) => n.length <= 100)) },
    { weight: 1, arbitrary: fc.string({ unit: hostileChar, maxLength: 6 }).map(percentEncode) },
  );
}

/** Query values as they go on the wire. */
export const ODD_QUERY_VALUES = [
  ...words(`
  %00 a%00b %ff %c0%af %ed%a0%80 %e2%82 %2e%2e .. % %% %zz %u0041 + %20 = == %26 %3D %E2%80%AE
  1%2C2 [] %5B%5D
`),
  '',
];

export function queryValue(world: World, parameter: Parameter | undefined): fc.Arbitrary<string> {
  const schema = parameter?.schema ?? {};
  const valid: fc.Arbitrary<string>[] = [];
  if (Array.isArray(schema.enum)) valid.push(fc.constantFrom(...(schema.enum as string[])));
  if (schema.type === 'integer')
    valid.push(fc.integer({ min: schema.minimum ?? 1, max: schema.maximum ?? 100 }).map(String));
  if (parameter?.name === 'cursor') {
    valid.push(fc.constantFrom(...world.cursors).map(encodeURIComponent));
    valid.push(
      fc
        .tuple(fc.constantFrom(...world.cursors), fc.nat(), fc.constantFrom('A', '_', '-', '.', '=', ''))
        .map(([cursor, at, char]) =>
          percentEncode(cursor.slice(0, at % cursor.length) + char + cursor.slice((at % cursor.length) + 1)),
        ),
    );
    valid.push(fc.base64String({ maxLength: 80 }).map((text) => percentEncode(`${text}.${text}`)));
  }
  return fc.oneof(
    ...valid.map((arbitrary) => ({ weight: 4, arbitrary })),
    { weight: 2, arbitrary: fc.constantFrom(...ODD_QUERY_VALUES) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...NUMBER_LITERALS, 'NaN', 'Infinity', ' 1', '1 ', '0x10', 'true').map(percentEncode),
    },
    { weight: 2, arbitrary: hostileString.filter((s) => s.length < 2000).map(percentEncode) },
    // Huge and malformed cursors (and anything else): up to ~12 KB, under Node's 16 KiB header limit.
    { weight: 1, arbitrary: fc.integer({ min: 150, max: 12_000 }).map((n) => 'A'.repeat(n)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((n) => '.'.repeat(n)) },
  );
}

export const ODD_QUERY_NAMES = [
  ...words(`
  __proto__ constructor prototype toString hasOwnProperty stauts Limit LIMIT limit[] limit[0] a[b]
  __proto__[admin] %00 %ff limit%00 l%69mit cursor%20 offset page
`),
  '',
];

export function query(world: World, operation: Operation): fc.Arbitrary<string> {
  const declared = operation.queryParameters.map((parameter) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant<string[]>([]) },
      { weight: 3, arbitrary: queryValue(world, parameter).map((v) => [`${parameter.name}=${v}`]) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(queryValue(world, parameter), queryValue(world, parameter))
          .map(([a, b]) => [`${parameter.name}=${a}`, `${parameter.name}=${b}`]),
      },
      { weight: 1, arbitrary: fc.constant([parameter.name]) },
    ),
  );
  const extra = fc.oneof(
    { weight: 6, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 1,
      arbitrary: fc.array(
        fc.tuple(fc.constantFrom(...ODD_QUERY_NAMES), queryValue(world, undefined)).map(([n, v]) => `${n}=${v}`),
        { minLength: 1, maxLength: 3 },
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(['&'], ['&&'], ['='], [';'], ['a=1;b=2']) },
  );
  return fc.tuple(fc.tuple(...declared), extra).map(([parts, more]) => {
    const all = [...parts.flat(), ...more];
    return all.length === 0 ? '' : `?${all.join('&')}`;
  });
}
