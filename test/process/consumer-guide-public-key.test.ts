import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../../dev/eventually.js';
import { freePort, runCollecting } from '../helpers/child-output.js';
import { startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

/** The receiver is a separate process: it gets time to start and to print. */
const PATIENT = { timeoutMs: 10_000 };
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The consumer guide's Ed25519 receiver (docs/consumers.md, "Public-key signatures (Ed25519)"), as it is written. */
function receiverSnippet(): string {
  const guide = readFileSync(join(ROOT, 'docs', 'consumers.md'), 'utf8');
  const section = guide.split(/^## /m).find((part) => part.startsWith('Public-key signatures (Ed25519)\n'));
  assert.ok(section, 'docs/consumers.md has a "Public-key signatures (Ed25519)" section');
  const blocks = [...section.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((block) => block[1] as string);
  assert.equal(blocks.length, 1, 'one receiver');
  return blocks[0] as string;
}

eachBackend((backend) => {
  describe(`the consumer guide's Ed25519 receiver [${backend.name}]`, () => {
    test('verifies deliveries with the public key alone, through a rotation; refuses a forged one', async (t) => {
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: 2000, retrySchedule: [100, 200] },
      });
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/`;
      const created = await h.call('POST', '/v1/webhooks', {
        body: { url, events: ['pet.created'], signature: 'ed25519' },
      });
      assert.equal(created.status, 201, created.text);
      const dir = tempDir(t);
      writeFileSync(join(dir, 'receiver.mjs'), receiverSnippet());
      const env = { PATH: process.env.PATH, PORT: String(port), WEBHOOK_PUBLIC_KEY: created.json.publicKey };
      const { output } = runCollecting(t, process.execPath, ['receiver.mjs'], { cwd: dir, env });
      // Listening: anything but a connection refused.
      await waitUntil(
        'the receiver listening',
        () =>
          fetch(url).then(
            () => true,
            () => false,
          ),
        PATIENT,
      );

      const printed = async (pet: { id: number }) => {
        await waitUntil(`pet ${pet.id} printed`, () => output().includes(`"id":${pet.id},`), PATIENT);
        assert.match(output(), new RegExp(`pet\\.created evt_\\d+ \\{"id":${pet.id},"name":"pet-`));
      };
      const [first] = await h.createPets(1);
      await printed(first);

      // The receiver holds only the key a rotation replaced: during the overlap it still verifies.
      const rotated = await h.call('POST', `/v1/webhooks/${created.json.id}/rotate-secret`);
      assert.equal(rotated.json.previousPublicKey, created.json.publicKey);
      const [second] = await h.createPets(1);
      await printed(second);

      // Signed with no key of the endpoint's: refused, and nothing printed.
      const forged = await fetch(url, {
        method: 'POST',
        headers: {
          'webhook-id': 'evt_999',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': `v1a,${Buffer.alloc(64).toString('base64')}`,
        },
        body: JSON.stringify({ id: 'evt_999', type: 'pet.created', data: {} }),
      });
      assert.equal(forged.status, 400);
      const stale = await fetch(url, { method: 'POST', headers: { 'webhook-id': 'evt_998' }, body: '{}' });
      assert.equal(stale.status, 400, 'no timestamp');
      assert.doesNotMatch(output(), /evt_99[89]/);
    });
  });
});
