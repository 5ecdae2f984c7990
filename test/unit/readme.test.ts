import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isWellFormedApiKey } from '../../src/domain/api-key.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the project's own files are: what is generated or installed is not read. */
const SOURCES = ['src', 'test', 'bench', 'dev', 'docs', 'deploy', '.ci', 'Dockerfile', 'package.json'];

function files(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
/** The pages a reader has: the README, and the docs/ pages it leads to (decision records included). */
const PAGES = [
  'README.md',
  ...files(join(ROOT, 'docs'))
    .filter((path) => path.endsWith('.md'))
    .map((path) => relative(ROOT, path)),
];

/** A page's sections, as files cite them: its headings, and its paragraphs led in bold. */
function sections(page: string): Set<string> {
  const text = read(page);
  return new Set([
    ...[...text.matchAll(/^#+ (.+)$/gm)].map((match) => match[1] as string),
    ...[...text.matchAll(/^\*\*([^*]+)\.\*\*/gm)].map((match) => match[1] as string),
  ]);
}

/** The fragment GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchors(page: string): Set<string> {
  return new Set(
    [...read(page).matchAll(/^#+ (.+)$/gm)].map((match) =>
      (match[1] as string)
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replaceAll(' ', '-'),
    ),
  );
}

/** Every citation in the project's files of a page's section: the README or a docs/ page, a comma, the section quoted. */
function citations(): { from: string; page: string; section: string }[] {
  return SOURCES.flatMap((source) => files(join(ROOT, source))).flatMap((path) =>
    [...readFileSync(path, 'utf8').matchAll(/(README(?:\.md)?|docs\/[\w./-]+\.md), "([^"]+)"/g)].map((match) => ({
      from: relative(ROOT, path),
      page: (match[1] as string).startsWith('README') ? 'README.md' : (match[1] as string),
      section: match[2] as string,
    })),
  );
}

test('every section a file cites exists: a heading, or a paragraph led in bold, of the page it names', () => {
  const missing = citations()
    .filter(({ page, section }) => !existsSync(join(ROOT, page)) || !sections(page).has(section))
    .map(({ from, page, section }) => `${from}: ${page}, "${section}"`);
  assert.deepEqual(missing, []);
});

test('every docs/ page a file names exists', () => {
  const missing = SOURCES.flatMap((source) => files(join(ROOT, source))).flatMap((path) =>
    [...readFileSync(path, 'utf8').matchAll(/(?<![\w/])docs\/[\w./-]*\w\.md\b/g)]
      .filter((match) => !existsSync(join(ROOT, match[0])))
      .map((match) => `${relative(ROOT, path)}: ${match[0]}`),
  );
  assert.deepEqual(missing, []);
});

test('every link between the pages reaches a file, and with a fragment, a heading of that page', () => {
  const broken = PAGES.flatMap((page) =>
    [...read(page).matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1] as string)
      .filter((target) => !/^[a-z]+:/.test(target))
      .filter((target) => {
        const [path = '', fragment] = target.split('#');
        const to = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path));
        if (!existsSync(join(ROOT, to))) return true;
        return fragment !== undefined && (!to.endsWith('.md') || !anchors(to).has(fragment));
      })
      .map((target) => `${page}: ${target}`),
  );
  assert.deepEqual(broken, []);
});

test("the pages' sample keys are keys the service accepts", () => {
  const keys = PAGES.flatMap((page) => [...read(page).matchAll(/psk_[0-9A-Za-z]+/g)].map((match) => match[0])).filter(
    (key) => key.length > 8,
  );
  assert.ok(keys.length > 0, 'the quick start shows a key');
  for (const key of keys) assert.ok(isWellFormedApiKey(key), `${key} (${key.length - 4} characters after psk_)`);
});
