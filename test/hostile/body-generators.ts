import fc from 'fast-check';
import { deepNesting, hostileKey, hostileValue, type Json, jsonText, value } from './json-generators.js';
import { resolve, type Schema } from './openapi-operations.js';
import { BODY_LIMIT, MAX_SAFE } from './settings.js';

/** Values that satisfy a schema of the document (mostly small ids, so requests reach existing rows). */
export function validJson(doc: Schema, schema: Schema): fc.Arbitrary<Json> {
  const s = resolve(doc, schema);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum).map(value);
  switch (s.type) {
    case 'integer': {
      const min: number = s.minimum ?? -MAX_SAFE;
      const max: number = s.maximum ?? MAX_SAFE;
      const clamp = (n: number) => Math.min(max, Math.max(min, n));
      return fc
        .oneof(
          { weight: 6, arbitrary: fc.integer({ min: clamp(1), max: clamp(10) }) },
          { weight: 1, arbitrary: fc.integer({ min, max }) },
          { weight: 1, arbitrary: fc.constantFrom(min, max) },
        )
        .map(value);
    }
    case 'string': {
      const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
      const built = pattern === undefined ? undefined : stringsMatching(pattern);
      if (built !== undefined) {
        const fits = (text: string) => text.length >= (s.minLength ?? 0) && text.length <= (s.maxLength ?? text.length);
        return built.filter(fits).map(value);
      }
      return fc
        .string({ unit: 'grapheme', minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 24, 24) })
        .filter((text) => (pattern?.test(text) ?? true) && text.trim() !== '')
        .map(value);
    }
    case 'boolean':
      return fc.boolean().map(value);
    case 'object': {
      const required = new Set<string>(s.required ?? []);
      const fields = Object.entries<Schema>(s.properties ?? {}).map(([name, property]) =>
        required.has(name)
          ? validJson(doc, property).map((item) => [[name, item] as const])
          : fc.option(
              validJson(doc, property).map((item) => [[name, item] as const]),
              { nil: [] as Array<readonly [string, Json]> },
            ),
      );
      return fc.tuple(...fields).map((parts): Json => ({ kind: 'object', entries: parts.flat() }));
    }
    default:
      return hostileValue;
  }
}

export type Mutation =
  | { readonly kind: 'drop'; readonly at: number }
  | {
      readonly kind: 'extra' | 'replace' | 'duplicate';
      readonly at: number;
      readonly key: string;
      readonly value: Json;
    };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constantFrom('extra' as const, 'replace' as const, 'duplicate' as const),
    at: fc.nat(),
    key: hostileKey,
    value: hostileValue,
  }),
);

export function mutate(body: Json, mutations: readonly Mutation[]): Json {
  if (body.kind !== 'object') return body;
  let entries = [...body.entries];
  for (const m of mutations) {
    const at = entries.length === 0 ? 0 : m.at % entries.length;
    const existing = entries[at];
    if (m.kind === 'drop') entries = entries.filter((_, i) => i !== at);
    else if (m.kind === 'extra') entries.splice(m.at % (entries.length + 1), 0, [m.key, m.value]);
    else if (existing !== undefined && m.kind === 'replace') entries[at] = [existing[0], m.value];
    else if (existing !== undefined) entries.push([existing[0], m.value]);
  }
  return { kind: 'object', entries };
}

/** Text that is not JSON, made from text that is. */
export const malformation = fc.record({
  at: fc.nat(),
  how: fc.constantFrom('truncate', 'insert', 'bom', 'trailing', 'quotes'),
  insert: fc.constantFrom('\u0000', '\u0001', ',', '}', ']', "'", 'NaN', 'Infinity', '/*c*/', '\ud800', '\\', '"'),
});
export function malformed(text: string, m: { at: number; how: string; insert: string }): string {
  const at = 1 + (m.at % Math.max(1, text.length - 1));
  switch (m.how) {
    case 'truncate':
      return text.slice(0, at);
    case 'insert':
      return text.slice(0, at) + m.insert + text.slice(at);
    case 'bom':
      return `\ufeff${text}`;
    case 'trailing':
      return `${text}${m.insert}`;
    default:
      return text.replaceAll('"', "'");
  }
}

/** Makes the body exactly `size` bytes: white space after the JSON, or a longer first string field. */
export function sized(text: string, size: number, inString: boolean): string {
  const missing = size - Buffer.byteLength(text);
  if (missing <= 0) return text;
  const quote = text.indexOf('":"');
  if (inString && quote >= 0) return `${text.slice(0, quote + 3)}${'z'.repeat(missing)}${text.slice(quote + 3)}`;
  return text + ' '.repeat(missing);
}

export const BODY_SIZES = fc.oneof(
  fc.integer({ min: BODY_LIMIT - 8, max: BODY_LIMIT + 8 }),
  fc.constantFrom(BODY_LIMIT - 1, BODY_LIMIT, BODY_LIMIT + 1, 70 * 1024, 100 * 1024),
);

/** A request body for a schema: mostly the schema's own shape, mutated; sometimes something else entirely. */
export function bodyText(doc: Schema, schema: Schema): fc.Arbitrary<string> {
  const base = validJson(doc, schema);
  return fc.oneof(
    { weight: 3, arbitrary: base.map(jsonText) },
    {
      weight: 6,
      arbitrary: fc
        .tuple(base, fc.array(mutation, { minLength: 1, maxLength: 3 }))
        .map(([json, mutations]) => jsonText(mutate(json, mutations))),
    },
    { weight: 1, arbitrary: hostileValue.map(jsonText) },
    { weight: 1, arbitrary: deepNesting.map(jsonText) },
    { weight: 1, arbitrary: fc.tuple(base, malformation).map(([json, m]) => malformed(jsonText(json), m)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(base, BODY_SIZES, fc.boolean())
        .map(([json, size, inString]) => sized(jsonText(json), size, inString)),
    },
  );
}

/**
 * Strings a pattern accepts, built from it where fast-check can (`^evt_[1-9][0-9]{0,14}$`, an RFC 3339
 * time: random strings almost never match those, and filtering them never ends); undefined for a pattern it
 * cannot build from (Unicode property classes, as the pet name's), which random strings mostly match.
 */
function stringsMatching(pattern: RegExp): fc.Arbitrary<string> | undefined {
  try {
    return fc.stringMatching(pattern);
  } catch {
    return undefined;
  }
}
