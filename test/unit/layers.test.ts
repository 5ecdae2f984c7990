import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/temp-dir.js';
import { toolEnv } from '../helpers/tool-env.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** One import planted in a copy of src/, and the rule of .dependency-cruiser.cjs that must refuse it. */
const PLANTED: ReadonlyArray<{ file: string; imports: string; rule: string }> = [
  { file: 'events/feed-bell.ts', imports: '../process/signals.js', rule: 'request-side-not-transport' },
  { file: 'http/links.ts', imports: '../server/graceful-close.js', rule: 'request-side-not-transport' },
  { file: 'observability/request-log.ts', imports: '../process/ready-line.js', rule: 'request-side-not-transport' },
  { file: 'events/frame-cache.ts', imports: '../api/meta.js', rule: 'routes-from-app-only' },
  { file: 'plugins/security-headers.ts', imports: '../events/feed-bell.js', rule: 'features-apart' },
  { file: 'webhooks/delivery-pace.ts', imports: '../rate-limit/fail-open.js', rule: 'features-apart' },
  { file: 'cache/versioned-cache.ts', imports: '../openapi/error-responses.js', rule: 'helpers-below-features' },
];

test('npm run layers refuses each planted import by its rule, in a copy of src/', async (t) => {
  const copy = tempDir(t, 'petstore-layers-');
  for (const path of ['src', '.dependency-cruiser.cjs', 'tsconfig.json']) {
    cpSync(join(ROOT, path), join(copy, path), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  for (const { file, imports } of PLANTED) appendFileSync(join(copy, 'src', file), `import '${imports}';\n`);

  const depcruise = join(ROOT, 'node_modules/.bin/depcruise');
  const args = ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'];
  const failed = await promisify(execFile)(depcruise, args, { cwd: copy, env: toolEnv() }).then(
    () => assert.fail('the planted imports passed'),
    (error: { stdout: string }) => error.stdout,
  );
  const refused = PLANTED.filter(({ file, imports, rule }) => {
    const target = join('src', file, '..', imports).replace(/\.js$/, '.ts');
    return failed.includes(`error ${rule}: src/${file} → ${target}`);
  });
  assert.deepEqual(refused, PLANTED, failed);
});
