import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../../dev/petstore-cli.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { request } from '../helpers/calls.js';
import { cliEnv, startServe } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';

test('keys never reach the logs, even at trace level, valid or not', async (t) => {
  const env = cliEnv(join(tempDir(t), 'petstore.db'), { LOG_LEVEL: 'trace', RATE_LIMIT_RPS: '100' });
  await runCli(['keys', 'create', '--name', 'bootstrap'], env);
  const server = await startServe(t, env);
  const key = (await runCli(['keys', 'create', '--name', 'logged'], env)).stdout.trim();
  const wrong = generateApiKey();
  const malformed = 'psk_not-a-real-key-but-secret-looking';
  const pet = (await request(server.url, 'POST', '/v1/pets', { key, body: { name: 'Rex', categoryId: 1 } })).json;
  await request(server.url, 'GET', `/v1/pets/${pet.id}`, { key });
  await request(server.url, 'GET', '/v1/pets?limit=0', { key });
  await request(server.url, 'POST', '/v1/store/orders', {
    key,
    body: { petId: pet.id },
    headers: { 'idempotency-key': 'k1' },
  });
  await request(server.url, 'GET', '/v1/pets', { key: wrong });
  await request(server.url, 'GET', '/v1/pets', { key: null, headers: { authorization: `Bearer ${malformed}` } });
  await request(server.url, 'GET', '/v1/pets', { key: null, headers: { authorization: `Basic ${key}` } });
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
  const logs = server.stdout() + server.stderr();
  assert.ok(logs.split('\n').length > 10, 'the session was logged');
  for (const secret of [key, wrong, malformed, key.slice(4, 24)]) {
    assert.ok(!logs.includes(secret), `the logs contain ${secret.slice(0, 8)}…`);
  }
  assert.doesNotMatch(logs, /psk_[0-9A-Za-z]{20,}/, 'no key-shaped text at all');
});
