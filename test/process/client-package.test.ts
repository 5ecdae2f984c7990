import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { createKey } from '../../dev/petstore-cli.js';
import { cliEnv, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { BACKENDS, eachBackend, type StoreBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';
import { toolEnv } from '../helpers/tool-env.js';

/** The built package (`npm run build` first): what a consumer installs. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST_CLIENT = join(ROOT, 'dist', 'client');
const run = promisify(execFile);

/** The first fenced code block of the consumer guide's client section (docs/consumers.md). */
function guideExample(): string {
  const guide = readFileSync(join(ROOT, 'docs', 'consumers.md'), 'utf8');
  const section = guide.split(/^## /m).find((part) => part.startsWith('Calling the API from TypeScript\n'));
  const code = section === undefined ? undefined : /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(code, 'docs/consumers.md has a "Calling the API from TypeScript" section with a ```js block');
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

/**
 * Runs tsc with `args` in `dir`, Node's types from this checkout (offline, they stand in for the @types/node a
 * project installs); fails the test with tsc's messages if any.
 */
async function tsc(dir: string, args: string[]): Promise<void> {
  const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const typeRoots = join(ROOT, 'node_modules', '@types');
  const result = await run(process.execPath, [bin, ...args, '--typeRoots', typeRoots], {
    cwd: dir,
    env: toolEnv(),
  }).catch((error: { stdout: string; stderr: string }) => assert.fail(`tsc: ${error.stdout}${error.stderr}`));
  assert.equal(result.stdout, '');
}

/** Runs tsc (strict, Node's types) over `files` in `dir`; fails the test with tsc's messages if any. */
async function typeCheck(dir: string, files: string[], libCheck = false): Promise<void> {
  const args = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022'];
  if (!libCheck) args.push('--skipLibCheck');
  await tsc(dir, [...args, '--types', 'node', ...files]);
}

/** Runs `dir/example.mjs` with plain node against `petstore serve` on a fresh database of `backend`. */
async function runExample(t: TestContext, backend: StoreBackend, dir: string): Promise<void> {
  const env = cliEnv(await freshDatabaseUrl(t, backend));
  const key = await createKey(env, 'example');
  const serve = await startServe(t, env);
  const { stdout } = await run(process.execPath, ['example.mjs'], {
    cwd: dir,
    env: { PATH: process.env.PATH, PETSTORE_URL: serve.url, PETSTORE_KEY: key },
    timeout: 20_000,
  });
  const id = /^created pet (\d+): Rex, available$/m.exec(stdout)?.[1];
  assert.ok(id, stdout);
  assert.match(stdout, new RegExp(`^${id}\tRex$`, 'm'));
  assert.match(stdout, new RegExp(`^409 conflict: pet ${id} is pending, not available$`, 'm'));
}

test("the consumer guide's client example is valid TypeScript (strict), against the package's types", async (t) => {
  const dir = consumerProject(t);
  writeFileSync(join(dir, 'example.mts'), guideExample());
  await typeCheck(dir, ['example.mts']);
});

eachBackend((backend) => {
  describe(`the consumer guide's client example [${backend.name}]`, () => {
    test('runs with plain node against `petstore serve`', async (t) => {
      const dir = consumerProject(t);
      writeFileSync(join(dir, 'example.mjs'), guideExample());
      await runExample(t, backend, dir);
    });
  });
});

/**
 * One module comparing each type of the packed schemas/*.d.ts with the service's own of the same module and
 * name: each must be the other's type exactly (the identity test tsc uses for generic functions).
 */
function sameTypesModule(dir: string): string {
  const packedSchemas = join(dir, 'node_modules', 'petstore-client', 'schemas');
  const lines = [
    'type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;',
  ];
  for (const file of readdirSync(packedSchemas)) {
    const module = basename(file, '.d.ts');
    // A module's name as an identifier: webhook-delivery as webhook_delivery.
    const id = module.replaceAll('-', '_');
    const text = readFileSync(join(packedSchemas, file), 'utf8');
    const service = relative(dir, join(ROOT, 'dist', 'schemas', `${module}.js`));
    lines.push(`import type * as packed_${id} from './node_modules/petstore-client/schemas/${module}.js';`);
    lines.push(`import type * as service_${id} from '${service}';`);
    for (const statement of ts.createSourceFile(file, text, ts.ScriptTarget.Latest).statements) {
      assert.ok(ts.isTypeAliasDeclaration(statement), `${file} declares type aliases only`);
      const name = statement.name.text;
      lines.push(`export const ${id}_${name}: Same<packed_${id}.${name}, service_${id}.${name}> = true;`);
    }
  }
  assert.ok(
    lines.some((line) => line.includes('packed_pet.Pet,')),
    'the packed package has schemas/pet.d.ts',
  );
  return `${lines.join('\n')}\n`;
}

test('`npm run pack:client`: the client alone, installable with no dependencies', async (t) => {
  const out = tempDir(t);
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'dev', 'pack-client.ts'), '--out', out],
    // It packs dist/client with TypeScript and npm, and runs no line of src/.
    { cwd: ROOT, env: toolEnv() },
  );
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const tarball = join(out, `petstore-client-${version}.tgz`);
  assert.equal(stdout.trim(), tarball);

  // A project of its own, away from this checkout, so nothing of the service's node_modules is in reach.
  const dir = tempDir(t);
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: dir, env: toolEnv() });

  await t.test('installs petstore-client and nothing else', () => {
    const installed = readdirSync(join(dir, 'node_modules')).filter((name) => !name.startsWith('.'));
    assert.deepEqual(installed, ['petstore-client']);
  });

  await t.test(
    "its types: the consumer guide's example type-checks (strict), and they are the service's own",
    async () => {
      writeFileSync(join(dir, 'example.mts'), guideExample().replaceAll("'petstore/client'", "'petstore-client'"));
      // Without --skipLibCheck: the package's own .d.ts files must resolve and type-check without typebox.
      await typeCheck(dir, ['example.mts'], true);
      // With it: the service's side reaches typebox, whose declarations would take seconds to check.
      writeFileSync(join(dir, 'same-types.mts'), sameTypesModule(dir));
      await typeCheck(dir, ['same-types.mts']);
    },
  );

  await t.test(
    'its own README: a project set up as it says compiles its example (tsc --strict) and runs it',
    async (t) => {
      const packageReadme = readFileSync(join(dir, 'node_modules', 'petstore-client', 'README.md'), 'utf8');
      const engines = JSON.parse(readFileSync(join(dir, 'node_modules', 'petstore-client', 'package.json'), 'utf8'))
        .engines.node;
      assert.ok(packageReadme.includes(`Node: \`${engines}\``), 'the README states the engines of the manifest');
      // It travels without the service's docs: what it points at must be in the package.
      const pointed = [...packageReadme.matchAll(/`((?:client|schemas)\/[\w.-]+)`/g)].map((match) => match[1] ?? '');
      assert.ok(pointed.length > 0, 'the README points at the declarations that document every call');
      for (const path of pointed) {
        assert.ok(existsSync(join(dir, 'node_modules', 'petstore-client', path)), `the package holds ${path}`);
      }
      assert.doesNotMatch(packageReadme, /\]\((?!https:)/, 'no relative link: nothing beside the package resolves');
      const block = (language: string) => new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(packageReadme)?.[1];
      const [code, tsconfig] = [block('ts'), block('json')];
      assert.ok(code !== undefined && tsconfig !== undefined, 'a ```ts example and a ```json tsconfig');
      const project = join(dir, 'readme-project');
      mkdirSync(project);
      symlinkSync(join(dir, 'node_modules'), join(project, 'node_modules'), 'dir');
      writeFileSync(join(project, 'package.json'), '{"type": "module"}\n');
      writeFileSync(join(project, 'tsconfig.json'), tsconfig);
      writeFileSync(join(project, 'main.ts'), code);
      await tsc(project, ['-p', '.']);
      const env = cliEnv(await freshDatabaseUrl(t, BACKENDS[0] as StoreBackend));
      const key = await createKey(env, 'readme');
      const serve = await startServe(t, env);
      const { stdout } = await run(process.execPath, ['main.js'], {
        cwd: project,
        env: { PATH: process.env.PATH, PETSTORE_URL: serve.url, PETSTORE_KEY: key },
        timeout: 20_000,
      });
      // The example reads the version createPet returned (WithEtag<Pet>), changes by it, and is refused with it.
      const [, before, after] = /^Rexa: version "(\d+)", now "(\d+)"$/m.exec(stdout) ?? [];
      assert.ok(before !== undefined && after !== undefined && before !== after, stdout);
      assert.match(stdout, /^412 precondition_failed$/m);
      assert.match(stdout, /^\d+ Rexa$/m);
    },
  );

  await t.test("the consumer guide's example runs with plain node against `petstore serve`", async (t) => {
    writeFileSync(join(dir, 'example.mjs'), guideExample().replaceAll("'petstore/client'", "'petstore-client'"));
    const sqlite = BACKENDS.find((backend) => backend.name === 'sqlite');
    assert.ok(sqlite);
    await runExample(t, sqlite, dir);
  });
});
