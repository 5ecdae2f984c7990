import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { eachBackend } from './helpers/harness.js';
import { cliEnv, createKey, freshDatabaseUrl, startServe } from './helpers/process.js';
import { tempDir } from './helpers/temp-dir.js';

/** The built package (`npm run build` first): what a consumer installs. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST_CLIENT = join(ROOT, 'dist', 'client');
const run = promisify(execFile);

/** The first fenced code block of the README's client section. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('Calling the API from TypeScript\n'));
  const code = section === undefined ? undefined : /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(code, 'the README has a "Calling the API from TypeScript" section with a ```js block');
  return code;
}

/** A directory like a consumer's project: `petstore` installed (linked) in its node_modules. */
function consumerProject(t: TestContext): string {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'petstore'), 'dir');
  return dir;
}

test('the built client imports nothing but its own files and node: built-ins', () => {
  const files = readdirSync(DIST_CLIENT).filter((name) => name.endsWith('.js'));
  assert.ok(files.includes('index.js'), 'built: run `npm run build` first');
  const specifiers = files.flatMap((name) =>
    ts.preProcessFile(readFileSync(join(DIST_CLIENT, name), 'utf8'), true, true).importedFiles.map((file) => ({
      name,
      specifier: file.fileName,
    })),
  );
  assert.ok(
    specifiers.some(({ specifier }) => specifier.startsWith('node:')),
    'the scan finds imports',
  );
  for (const { name, specifier } of specifiers) {
    const local = specifier.startsWith('./') && files.includes(specifier.slice(2));
    assert.ok(local || specifier.startsWith('node:'), `${name} imports ${specifier}`);
  }
});

test("the README's client example is valid TypeScript (strict), against the package's types", async (t) => {
  const dir = consumerProject(t);
  writeFileSync(join(dir, 'example.mts'), readmeExample());
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const typeRoots = join(ROOT, 'node_modules', '@types');
  const args = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--skipLibCheck'];
  const result = await run(
    process.execPath,
    [tsc, ...args, '--types', 'node', '--typeRoots', typeRoots, 'example.mts'],
    {
      cwd: dir,
    },
  ).catch((error: { stdout: string; stderr: string }) => assert.fail(`tsc: ${error.stdout}${error.stderr}`));
  assert.equal(result.stdout, '');
});

eachBackend((backend) => {
  describe(`the README's client example [${backend.name}]`, () => {
    test('runs with plain node against `petstore serve`', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const key = await createKey(env, 'example');
      const serve = await startServe(t, env);
      const dir = consumerProject(t);
      writeFileSync(join(dir, 'example.mjs'), readmeExample());
      const { stdout } = await run(process.execPath, ['example.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH, PETSTORE_URL: serve.url, PETSTORE_KEY: key },
        timeout: 20_000,
      });
      const id = /^created pet (\d+): Rex, available$/m.exec(stdout)?.[1];
      assert.ok(id, stdout);
      assert.match(stdout, new RegExp(`^${id}\tRex$`, 'm'));
      assert.match(stdout, new RegExp(`^409 conflict: pet ${id} is pending, not available$`, 'm'));
    });
  });
});
