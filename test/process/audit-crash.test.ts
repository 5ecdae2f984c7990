import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cliStdout, createKey } from '../../dev/petstore-cli.js';
import { request } from '../helpers/calls.js';
import { cliEnv, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { eachBackend } from '../helpers/stores.js';

/**
 * The audit log against a real `serve` killed with SIGKILL in the middle of endpoint changes: each entry
 * commits with its change or not at all, so after the restart every endpoint is as its newest entry says,
 * and no entry tells of a change that did not happen. Then `petstore audit` reads the same log.
 */

const ENDPOINTS = 10;
const CHANGES_EACH = 10;
/** The kill comes once this many changes were acknowledged: the middle of the 100. */
const KILL_AFTER = 40;

const description = (endpoint: number, n: number) => `change ${n} of ${endpoint}`;

eachBackend((backend) => {
  describe(`audit log through a crash [${backend.name}]`, () => {
    test('SIGKILL among 100 endpoint changes: each endpoint is as its newest entry says', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend), { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
      let server = await startServe(t, env);
      const key = await createKey(env, 'auditor');
      const call = (url: string, method: string, path: string, body?: unknown) =>
        request(url, method, path, body === undefined ? {} : { body }, key);
      const ids: number[] = [];
      for (let i = 0; i < ENDPOINTS; i++) {
        const created = await call(server.url, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:9/${i}` });
        assert.equal(created.status, 201, created.text);
        ids.push(created.json.id);
      }

      // Each endpoint's changes in turn, the endpoints at once; what was sent and what was acknowledged.
      const sent = new Map<number, string[]>(ids.map((id) => [id, []]));
      const acknowledged = new Map<number, number>(ids.map((id) => [id, 0]));
      let acks = 0;
      let killed = false;
      const url = server.url;
      const loops = ids.map(async (id) => {
        for (let n = 0; n < CHANGES_EACH && !killed; n++) {
          const text = description(id, n);
          sent.get(id)?.push(text);
          // Every other change also moves the URL, so one entry holds two changed fields.
          const body =
            n % 2 === 0 ? { description: text } : { description: text, url: `http://127.0.0.1:9/${id}/${n}` };
          try {
            const changed = await call(url, 'PATCH', `/v1/webhooks/${id}`, body);
            if (changed.status !== 200) throw new Error(`${changed.status} ${changed.text}`);
            acknowledged.set(id, n + 1);
            acks++;
            if (acks === KILL_AFTER && !killed) {
              killed = true;
              server.child.kill('SIGKILL');
            }
          } catch (error) {
            if (!killed) throw error;
            return;
          }
        }
      });
      await Promise.all(loops);
      assert.deepEqual(await server.exit, { code: null, signal: 'SIGKILL' }, 'killed mid-changes');

      server = await startServe(t, env);
      let entriesSeen = 0;
      for (const id of ids) {
        const shown = await call(server.url, 'GET', `/v1/webhooks/${id}`);
        const log = await call(server.url, 'GET', `/v1/audit-log?limit=100&target=webhook_endpoint/${id}`);
        assert.equal(log.status, 200, log.text);
        const [newest] = log.json;
        assert.ok(newest !== undefined, `endpoint ${id} has entries`);
        for (const [field, change] of Object.entries(newest.changes as Record<string, { after: unknown }>)) {
          assert.deepEqual(shown.json[field], change.after, `endpoint ${id}'s ${field} is its newest entry's`);
        }
        // Oldest first: its creation, then its changes, which are those sent, in order, up to one that was not
        // acknowledged (it may or may not have committed), and at least every acknowledged one.
        const updates: any[] = log.json.slice(0, -1).reverse();
        assert.equal(log.json.at(-1).action, 'webhook_endpoint.created');
        const described: string[] = updates.map((entry) => entry.changes.description.after);
        assert.deepEqual(described, sent.get(id)?.slice(0, described.length), `endpoint ${id}: only changes made`);
        assert.ok(described.length >= (acknowledged.get(id) ?? 0), `endpoint ${id}: every acknowledged change`);
        entriesSeen += updates.length;
      }
      t.diagnostic(`${acks} changes acknowledged before the kill; ${entriesSeen} recorded`);
      assert.ok(entriesSeen >= KILL_AFTER && entriesSeen < ENDPOINTS * CHANGES_EACH, 'killed in the middle');

      // The command line reads the same log, and records its own changes in it.
      await cliStdout(['keys', 'revoke', 'auditor'], env);
      const [revoked] = JSON.parse(await cliStdout(['audit', '--json', '--action', 'api_key.revoked'], env));
      assert.deepEqual([revoked.actor, revoked.target.owner], [{ kind: 'cli' }, 'auditor']);
      const lines = (await cliStdout(['audit', '--target', `webhook_endpoint/${ids[0]}`], env)).trim().split('\n');
      assert.match(lines.at(-1) ?? '', /webhook_endpoint\.created {2}webhook_endpoint\/\d+ \[auditor\]/);
      assert.match(lines[0] ?? '', /key \d+ \(auditor\) {2}webhook_endpoint\.(updated|created) {2}/);
    });
  });
});
