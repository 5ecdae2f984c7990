import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// What `npm ci` runs besides the build: the install scripts package.json's `allowScripts` allows
// (docs/decisions/no-install-telemetry.md). npm warns on every install for a script it lists no decision for.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  allowScripts: Record<string, boolean>;
  scarfSettings?: { enabled?: boolean };
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

test('every locked package with an install script is allowed or denied by name, and no other is named', () => {
  const scripted = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  assert.deepEqual([...new Set(scripted)].sort(), Object.keys(manifest.allowScripts).sort());
});

test('@scarf/scarf reports no install: its script is denied, and told to send nothing where an npm runs it', () => {
  assert.equal(manifest.allowScripts['@scarf/scarf'], false);
  assert.equal(manifest.scarfSettings?.enabled, false);
});
