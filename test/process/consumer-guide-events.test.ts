import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../../dev/eventually.js';
import { createKey } from '../../dev/petstore-cli.js';
import { request } from '../helpers/calls.js';
import { freePort, runCollecting as run } from '../helpers/child-output.js';
import { cliEnv, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { eachBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

/** The consumer guide's programs are separate processes: they get time to start and to print. */
const PATIENT = { timeoutMs: 10_000 };

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GUIDE_ORIGIN = 'http://127.0.0.1:8080';

/** The fenced blocks of the consumer guide's events section (docs/consumers.md), in order, by language. */
function snippets(): { js: string[]; sh: string[] } {
  const guide = readFileSync(join(ROOT, 'docs', 'consumers.md'), 'utf8');
  const section = guide.split(/^## /m).find((part) => part.startsWith('Events: what changed\n'));
  assert.ok(section, 'docs/consumers.md has an "Events: what changed" section');
  const blocks = [...section.matchAll(/^```(js|sh)\n([\s\S]*?)^```$/gm)];
  return {
    js: blocks.filter((block) => block[1] === 'js').map((block) => block[2] as string),
    sh: blocks.filter((block) => block[1] === 'sh').map((block) => block[2] as string),
  };
}

/** A project directory with `petstore` and `standardwebhooks` installed (linked), as a consumer's would be. */
function consumerProject(t: TestContext): string {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'petstore'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', 'standardwebhooks'), join(dir, 'node_modules', 'standardwebhooks'), 'dir');
  return dir;
}

eachBackend((backend) => {
  describe(`the consumer guide's events snippets [${backend.name}]`, () => {
    test('poll with the client, stream with curl, receive and verify a webhook', async (t) => {
      const { js, sh } = snippets();
      assert.equal(js.length, 3, 'a client snippet, a receiver, and one that applies each subject in order');
      // The third keeps the last event applied per subject: an older one, or a repeat, changes nothing.
      const inOrder = new Function(`${js[2]}; return { apply, pets, lastApplied };`)();
      const rex = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };
      for (const [seq, type, name] of [
        [3, 'pet.updated', 'Rex II'],
        [2, 'pet.created', 'Rex'],
        [3, 'pet.updated', 'x'],
      ]) {
        inOrder.apply({ id: `evt_${seq}`, type, subject: 'pet/7', data: { ...rex, name } });
      }
      assert.deepEqual([...inOrder.pets.values()], [{ ...rex, name: 'Rex II' }], 'the older and the repeat skipped');
      inOrder.apply({ id: 'evt_4', type: 'pet.deleted', subject: 'pet/7', data: rex });
      assert.equal(inOrder.pets.size, 0, 'a deletion applied');
      assert.equal(sh.length, 2, 'the stream and the registration');
      const env = cliEnv(await freshDatabaseUrl(t, backend), {
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
      });
      const key = await createKey(env, 'guide');
      const serve = await startServe(t, env);
      const call = (method: string, path: string, body?: unknown) =>
        request(serve.url, method, path, body === undefined ? {} : { body }, key);
      const dir = consumerProject(t);
      const shell = (snippet: string) =>
        run(t, 'bash', ['-c', snippet.replaceAll(GUIDE_ORIGIN, serve.url)], { env: { ...process.env, KEY: key } });

      // Registering: the answer shows the secret once.
      const registration = shell(sh[1] as string);
      await waitUntil('the registration', () => registration.output().includes('"secret":"whsec_'), PATIENT);
      assert.match(registration.output(), /"events":\["order\.placed","order\.status_changed"\]/);

      // The receiver, on its own port, and an endpoint for it.
      const port = await freePort();
      const endpoint = await call('POST', '/v1/webhooks', {
        url: `http://127.0.0.1:${port}/`,
        events: ['pet.created'],
      });
      assert.equal(endpoint.status, 201, endpoint.text);
      writeFileSync(join(dir, 'receiver.mjs'), js[1] as string);
      const receiver = run(t, process.execPath, ['receiver.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH, PORT: String(port), WEBHOOK_SECRET: endpoint.json.secret },
      });

      writeFileSync(join(dir, 'follow.mjs'), js[0] as string);
      const follower = run(t, process.execPath, ['follow.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH, PETSTORE_URL: serve.url, PETSTORE_KEY: key },
      });
      const stream = shell(sh[0] as string);
      await new Promise((resolve) => setTimeout(resolve, 500));

      const pet = (await call('POST', '/v1/pets', { name: 'Rex', categoryId: 1 })).json;
      const [event] = await settledFeed((path) => call('GET', path), 1, 'type=pet.created');
      assert.equal(event.data.id, pet.id);
      const line = `pet.created ${event.id} ${JSON.stringify(pet)}`;
      await waitUntil(
        'the follower printing the event',
        () => follower.output().includes(`${event.timestamp} ${line}`),
        PATIENT,
      );
      await waitUntil(
        'the stream sending it',
        () => stream.output().includes(`data: ${JSON.stringify(event)}`),
        PATIENT,
      );
      await waitUntil('the receiver verifying it', () => receiver.output().includes(line), PATIENT);

      // A forged delivery is refused, and nothing is printed for it.
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: {
          'webhook-id': 'evt_999',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': 'v1,AAAA',
        },
        body: JSON.stringify({ ...event, id: 'evt_999' }),
      });
      assert.equal(forged.status, 400);
      assert.doesNotMatch(receiver.output(), /evt_999/);
      await serve.stop();
    });
  });
});
