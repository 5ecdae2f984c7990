import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createConfig, lint } from '@redocly/openapi-core';
import { startHarness } from '../helpers/harness.js';
import { BACKENDS, type StoreBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * The served document, linted as a consumer's tooling would: Redocly's recommended rules, plus the two
 * Spectral's default ruleset adds (a contact, and a description on every operation). Warnings count too.
 */
test('the OpenAPI document passes the Redocly linter without a warning', async (t) => {
  const h = await startHarness(t, BACKENDS.find((backend) => backend.name === 'sqlite') as StoreBackend);
  const served = await h.call('GET', '/v1/openapi.json', { key: null });
  assert.equal(served.status, 200);
  const path = join(tempDir(t), 'openapi.json');
  writeFileSync(path, served.text);

  const config = await createConfig({
    extends: ['recommended'],
    rules: { 'info-contact': 'error', 'operation-description': 'error' },
  });
  const problems = await lint({ ref: path, config });
  const said = problems.map(
    (problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`,
  );
  assert.deepEqual(said, []);
});
