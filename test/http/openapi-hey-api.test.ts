import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { startHarness } from '../helpers/harness.js';
import { BACKENDS, type StoreBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * The consumer guide's walk with @hey-api/openapi-ts, as written:
 * docs/consumers.md, "Generating a client with @hey-api/openapi-ts".
 * Its config, tsconfig and program, and its commands, against the served document. The generated client gets
 * only the API key, no base URL: the document's server is absolute even without PUBLIC_URL (with the relative
 * `/v1` it once had, every call failed with "Failed to parse URL"). In this checkout openapi-ts would find the
 * repository's tsconfig.json (nodenext) and add `.js` by itself; a new project may have none yet, so the walk's
 * config sets the extension, and the test checks the imports that result.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GUIDE_DOCUMENT = 'http://127.0.0.1:8080/v1/openapi.json';
const run = promisify(execFile);

/** The walk's fenced blocks, in order: install, the config, tsconfig.json, src/main.ts, the commands. */
function walk(): { install: string; config: string; tsconfig: string; main: string; commands: string } {
  const guide = readFileSync(join(ROOT, 'docs', 'consumers.md'), 'utf8');
  const section = guide
    .split(/^#+ /m)
    .find((part) => part.startsWith('Generating a client with @hey-api/openapi-ts\n'));
  assert.ok(section, 'docs/consumers.md has a "Generating a client with @hey-api/openapi-ts" section');
  const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((match) => ({
    language: match[1],
    code: match[2] as string,
  }));
  assert.deepEqual(
    blocks.map((block) => block.language),
    ['sh', 'ts', 'json', 'ts', 'sh'],
  );
  const [install, config, tsconfig, main, commands] = blocks.map((block) => block.code) as [
    string,
    string,
    string,
    string,
    string,
  ];
  return { install, config, tsconfig, main, commands };
}

/** Every relative module specifier in the generated files, with the file that holds it. */
function relativeImports(dir: string): { file: string; specifier: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      ts
        .preProcessFile(readFileSync(join(dir, file), 'utf8'), true, true)
        .importedFiles.map(({ fileName }) => ({ file, specifier: fileName }))
        .filter(({ specifier }) => specifier.startsWith('.')),
    );
}

test("the consumer guide's @hey-api/openapi-ts walk: generated, type-checked under nodenext, run with node", async (t) => {
  const { install, config, tsconfig, main, commands } = walk();
  const { devDependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const typescriptMajor = ts.versionMajorMinor.split('.')[0];
  // The versions it pins are the ones this test runs.
  assert.match(install, new RegExp(`@hey-api/openapi-ts@${devDependencies['@hey-api/openapi-ts']} `));
  assert.match(install, new RegExp(`typescript@${typescriptMajor} `));

  const h = await startHarness(t, BACKENDS[0] as StoreBackend);
  const project = tempDir(t);
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  writeFileSync(join(project, 'package.json'), '{"type": "module"}\n');
  assert.ok(config.includes(`'${GUIDE_DOCUMENT}'`), `the config reads ${GUIDE_DOCUMENT}`);
  writeFileSync(join(project, 'openapi-ts.config.ts'), config.replace(GUIDE_DOCUMENT, `${h.url}/v1/openapi.json`));
  writeFileSync(join(project, 'tsconfig.json'), tsconfig);
  mkdirSync(join(project, 'src'));
  writeFileSync(join(project, 'src', 'main.ts'), main);

  const lines = commands
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '');
  assert.deepEqual(lines, ['npx openapi-ts', 'npx tsc', 'PETSTORE_KEY=psk_... node dist/main.js']);
  const env = { PATH: process.env.PATH, PETSTORE_KEY: h.keys.all };
  const bin = (name: string) => join(project, 'node_modules', '.bin', name);
  await run(bin('openapi-ts'), [], { cwd: project, env });

  const generated = join(project, 'src', 'client');
  const types = readFileSync(join(generated, 'types.gen.ts'), 'utf8');
  assert.match(types, /^export type Error = \{/m, "the interface's schema keeps its name, Error");
  const imports = relativeImports(generated);
  assert.ok(imports.length > 0, 'the generated files import each other');
  // Node and `module: nodenext` take only imports that name their file.
  const unnamed = imports.filter(({ specifier }) => !specifier.endsWith('.js'));
  assert.deepEqual(unnamed, [], `imports without .js in ${relative(project, generated)}`);

  const checked = await run(bin('tsc'), [], { cwd: project, env }).catch((error: { stdout: string }) =>
    assert.fail(`tsc: ${error.stdout}`),
  );
  assert.equal(checked.stdout, '');
  const { stdout } = await run(process.execPath, ['dist/main.js'], { cwd: project, env, timeout: 20_000 });
  const id = /^created pet (\d+): Rex$/m.exec(stdout)?.[1];
  assert.ok(id, stdout);
  assert.match(stdout, new RegExp(`^${id}\tRex$`, 'm'));
});
