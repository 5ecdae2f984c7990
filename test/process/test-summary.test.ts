import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { sparePort } from '../helpers/pg-cluster.js';
import { tempDir } from '../helpers/temp-dir.js';

const STORES = new URL('../helpers/stores.ts', import.meta.url).href;

test('a PostgreSQL half skipped on a machine without PostgreSQL is counted in the summary, with its reason', async (t) => {
  const file = join(tempDir(t), 'both-backends.test.mts');
  writeFileSync(
    file,
    `import { test } from 'node:test';
import { eachBackend } from ${JSON.stringify(STORES)};
eachBackend((backend) => test(\`runs on \${backend.name}\`, () => undefined));
`,
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Nothing listens there: the PostgreSQL half is skipped (outside CI, where it would fail instead).
    PETSTORE_TEST_POSTGRES_URL: `postgres://postgres@127.0.0.1:${await sparePort()}/test`,
  };
  delete env.CI;
  delete env.NODE_TEST_CONTEXT;
  // TAP whatever the Node version (from Node 23 the default reporter is spec, also when piped).
  const args = ['--import', 'tsx', '--test', '--test-reporter=tap', file];
  const { stdout } = await promisify(execFile)(process.execPath, args, {
    env,
    cwd: process.cwd(),
  });
  assert.match(stdout, /^ok \d+ - runs on sqlite$/m);
  assert.match(stdout, /^ok \d+ - \[postgres\] every test of this file # SKIP PostgreSQL at \S+ is unreachable/m);
  assert.match(stdout, /^# skipped 1$/m, stdout);
  assert.match(stdout, /^# pass 1$/m, stdout);
});
