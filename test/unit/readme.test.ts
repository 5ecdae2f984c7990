import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isWellFormedApiKey } from '../../src/domain/api-key.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** Where the project's own files are: what is generated or installed is not read. */
const SOURCES = ['src', 'test', 'bench', 'dev', 'docs', 'deploy', '.ci', 'Dockerfile', 'package.json'];

function files(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}

test('every README section a file cites exists: a heading, or a paragraph led in bold', () => {
  const sections = new Set([
    ...[...README.matchAll(/^#+ (.+)$/gm)].map((match) => match[1]),
    ...[...README.matchAll(/^\*\*([^*]+)\.\*\*/gm)].map((match) => match[1]),
  ]);
  const missing = SOURCES.flatMap((source) => files(join(ROOT, source))).flatMap((path) =>
    [...readFileSync(path, 'utf8').matchAll(/README(?:\.md)?, "([^"]+)"/g)]
      .filter((match) => !sections.has(match[1] as string))
      .map((match) => `${path.slice(ROOT.length)}: "${match[1]}"`),
  );
  assert.deepEqual(missing, []);
});

test("the README's sample keys are keys the service accepts", () => {
  const keys = [...README.matchAll(/psk_[0-9A-Za-z]+/g)].map((match) => match[0]).filter((key) => key.length > 8);
  assert.ok(keys.length > 0, 'the quick start shows a key');
  for (const key of keys) assert.ok(isWellFormedApiKey(key), `${key} (${key.length - 4} characters after psk_)`);
});
