import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../../dev/eventually.js';
import { cliStdout } from '../../dev/petstore-cli.js';
import { freePort, runCollecting } from '../helpers/child-output.js';
import { cliEnv, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { BACKENDS, type StoreBackend } from '../helpers/stores.js';

/**
 * The README's partner walk, tried on one machine (README.md, "Trying webhooks on one machine"): its
 * commands as written, the service's address and the receiver's port aside, in separate shells.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README_ORIGIN = 'http://127.0.0.1:8080';
const README_PORT = '3000';

/** The partner walk's fenced shell blocks: the partner's key and registration, then the local trial. */
function partnerBlocks(): { key: string; local: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('For partners: webhooks and the portal\n'));
  assert.ok(section, 'README.md has a "For partners: webhooks and the portal" section');
  const [walk, local] = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
  const key = walk === undefined ? undefined : /^KEY=\$\(npx petstore (keys create [^)]*)\)$/m.exec(walk)?.[1];
  assert.ok(key !== undefined && local !== undefined, 'the walk issues a key, and a second block tries it locally');
  return { key, local };
}

/** The local trial's three terminals: the numbered comment that opens each, then its commands. */
function terminals(block: string): string[] {
  const parts = block.split(/^# \d\. .*\n/m).slice(1);
  assert.equal(parts.length, 3, 'three terminals: the service, the receiver, the partner');
  return parts.map((part) => part.trim());
}

/** Runs a shell command until the test ends, collecting what it prints. */
const shell = (t: TestContext, command: string, env: NodeJS.ProcessEnv) =>
  runCollecting(t, 'bash', ['-c', command], { env }).output;

test("the README's local webhook trial: a receiver on this machine gets the test delivery", async (t) => {
  const { key: keyCommand, local } = partnerBlocks();
  const [service = '', receiver = '', partner = ''] = terminals(local);
  assert.equal(service, 'WEBHOOK_ALLOW_PRIVATE_URLS=true npm start');
  const env = cliEnv(await freshDatabaseUrl(t, BACKENDS[0] as StoreBackend), { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  const key = (await cliStdout(keyCommand.split(' '), env)).trim();
  const serve = await startServe(t, env);

  const port = String(await freePort());
  assert.ok(receiver.includes(`.listen(${README_PORT})`) && partner.includes(`127.0.0.1:${README_PORT}/`));
  const here = (command: string) =>
    command.replaceAll(README_ORIGIN, serve.url).replaceAll(`127.0.0.1:${README_PORT}/`, `127.0.0.1:${port}/`);
  const received = shell(t, receiver.replace(`.listen(${README_PORT})`, `.listen(${port})`), {
    PATH: process.env.PATH,
  });
  const listening = () =>
    fetch(`http://127.0.0.1:${port}/`).then(
      (answer) => answer.ok,
      () => false,
    );
  await waitUntil(() => `the receiver listening: ${received()}`, listening, { timeoutMs: 10_000 });

  const asked = shell(t, here(partner), { PATH: process.env.PATH, KEY: key });
  await waitUntil(
    () => `the test send accepted: ${asked()}`,
    () => asked().includes('"eventId":"evt_'),
    {
      timeoutMs: 10_000,
    },
  );
  const eventId = /"eventId":"(evt_\d+)"/.exec(asked())?.[1];
  await waitUntil(
    () => `the receiver printing the delivery: ${received()}`,
    () => received().includes(`${eventId} {"id":"${eventId}","type":"webhook.test"`),
    { timeoutMs: 10_000 },
  );
  await serve.stop();
});
