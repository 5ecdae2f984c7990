import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The supported Node lines are said in three places: package.json `engines`, the README's "Node versions"
// paragraph, and the passes of .ci/run. These tests keep them saying the same.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

/** One alternative of `engines.node`: `^M.m.p` (that major from M.m.p) or `>=M.m.p` (and every later one). */
interface Bound {
  sameMajor: boolean;
  version: number[];
}

/** `engines.node`, in the only two forms it uses; anything else fails, so the checks below stay exact. */
function bounds(range: string): Bound[] {
  return range.split('||').map((part) => {
    const match = /^(\^|>=)(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(part.trim());
    assert.ok(match, `engines.node alternative "${part.trim()}" is ^M.m.p or >=M.m.p`);
    return { sameMajor: match[1] === '^', version: [2, 3, 4].map((group) => Number(match[group] ?? 0)) };
  });
}

function admits(range: string, version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = version.replace(/^v/, '').split('.').map(Number);
  return bounds(range).some(({ sameMajor, version: [low = 0, lowMinor = 0, lowPatch = 0] }) => {
    const atLeast = major !== low ? major > low : minor !== lowMinor ? minor > lowMinor : patch >= lowPatch;
    return atLeast && (!sameMajor || major === low);
  });
}

/** The README's "Node versions" paragraph: the lines it supports, and the end-of-life one it keeps working. */
function readme() {
  const text = read('README.md').replace(/\s+/g, ' ');
  const supported = /\*\*Node versions\.\*\* Supported: Node\.js (\d+) and (\d+), the current LTS lines/.exec(text);
  const kept = /Node (\d+) is past its end of life .*? keep working on it \((\d+\.\d+) or later\)/.exec(text);
  assert.ok(supported && kept, 'the README says which Node lines are supported and which one is kept');
  return { supported: [Number(supported[1]), Number(supported[2])], kept: Number(kept[1]), keptFrom: String(kept[2]) };
}

/** The Node lines .ci/run runs tests on, besides the machine's own (a stage that calls node_line). */
const ciLines = [...read('.ci/run').matchAll(/^stage "[^"]*" node_line (\d+)\b/gm)].map((match) => Number(match[1]));

test('the Node running the tests is one engines admits (the machine’s, and each of .ci/run’s passes)', () => {
  assert.ok(admits(engines, process.version), `${process.version} is outside engines.node "${engines}"`);
});

test('.ci/run runs tests on exactly the lines the README supports', () => {
  assert.deepEqual(ciLines, readme().supported);
});

test('engines admits the supported lines, and the kept one from the README’s floor on, and no other', () => {
  const { supported, kept, keptFrom } = readme();
  for (const line of supported) assert.ok(admits(engines, `${line}.99.0`), `engines admits Node ${line}`);
  const [major = 0, minor = 0] = keptFrom.split('.').map(Number);
  assert.equal(major, kept);
  assert.ok(admits(engines, `${major}.${minor}.0`), `engines admits Node ${keptFrom}, as the README says`);
  assert.ok(!admits(engines, `${major}.${minor - 1}.99`), `engines starts Node ${kept} at ${keptFrom}`);
  const majors = bounds(engines).map(({ version: [low = 0] }) => low);
  assert.deepEqual(
    majors.sort((a, b) => a - b),
    [kept, ...supported].sort((a, b) => a - b),
  );
});

test('package-lock.json records the same engines as package.json', () => {
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } }> };
  assert.equal(lock.packages['']?.engines?.node, engines);
});
