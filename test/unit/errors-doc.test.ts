import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_USES, ERRORS } from '../../src/errors/catalogue.js';

const DOC = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
/** The table's "when" of each code, lower-cased so that a use may open a sentence. */
const WHEN = new Map(
  [...DOC.matchAll(/^\| `([a-z_]+)` \| \d{3} \| (.*) \|$/gm)].map((match) => [match[1], match[2]?.toLowerCase()]),
);
const USES: Readonly<Record<string, string>> = ERROR_USES;

/** The kinds with a code of their own: Fastify's refusals take their status's. */
const KINDS = Object.entries(ERRORS).flatMap(([name, kind]) => ('code' in kind ? [{ name, code: kind.code }] : []));

test('every kind of the catalogue has its use', () => {
  assert.deepEqual(KINDS.map(({ name }) => name).sort(), Object.keys(USES).sort());
});

test('docs/errors.md has a row for each code the catalogue answers, and for no other', () => {
  assert.deepEqual([...WHEN.keys()].sort(), [...new Set(KINDS.map(({ code }) => code))].sort());
});

test("docs/errors.md tells each kind's use in the row of its code", () => {
  const untold = KINDS.filter(({ name, code }) => !WHEN.get(code)?.includes(USES[name]?.toLowerCase() ?? '')).map(
    ({ name, code }) => `${code}: ${name} ("${USES[name]}")`,
  );
  assert.deepEqual(untold, []);
});
