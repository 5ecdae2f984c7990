import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import { CLI, createKey } from '../../dev/petstore-cli.js';
import { buildApp } from '../../src/app.js';
import { loggerOptions } from '../../src/process/log-stream.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { request } from '../helpers/calls.js';
import { sparePort } from '../helpers/pg-cluster.js';
import { cliEnv } from '../helpers/process.js';
import { BACKENDS } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

const sqlite = BACKENDS[0] as (typeof BACKENDS)[number];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An app on a fresh SQLite store whose log lines (JSON, at `level`) are collected. */
async function loggedApp(t: TestContext, level: 'info' | 'trace') {
  const fixture = await sqlite.create();
  t.after(() => fixture.dispose());
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const app = await buildApp({ store: fixture.store, logger: { ...loggerOptions(level), stream } });
  t.after(() => app.close());
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const issued = await issueApiKey(fixture.store, () => new Date(), { name: 'logs' });
  return {
    url,
    store: fixture.store,
    key: issued.key,
    keyId: issued.record.id,
    stream,
    lines,
    entries: () => lines.map((line) => JSON.parse(line)),
  };
}

/** Up to 30 s: a generous ceiling, as a start on a slow machine with other test files busy may take 10. */
async function waitUntilUp(url: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up`);
}

describe('request ids and request logs', () => {
  test('X-Request-Id: a sane one is kept and echoed, a missing or unusable one is replaced by a UUID', async (t) => {
    const app = await loggedApp(t, 'info');
    const sent = await request(app.url, 'GET', '/v1/pets', {
      key: app.key,
      headers: { 'x-request-id': 'trace-42.a:b' },
    });
    assert.equal(sent.headers.get('x-request-id'), 'trace-42.a:b');
    const none = await request(app.url, 'GET', '/v1/pets', { key: app.key });
    assert.match(none.headers.get('x-request-id') ?? '', UUID);
    for (const unusable of ['has space', 'x'.repeat(201), 'naïve']) {
      const result = await request(app.url, 'GET', '/v1/pets', { key: app.key, headers: { 'x-request-id': unusable } });
      assert.equal(result.status, 200, 'an unusable id never fails the request');
      assert.match(result.headers.get('x-request-id') ?? '', UUID);
    }
    // Errors carry it too, and the 500 message names the same id (see errors.test.ts).
    const refused = await request(app.url, 'GET', '/v1/pets', { key: null, headers: { 'x-request-id': 'r-401' } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('x-request-id'), 'r-401');
  });

  test('one line per request: id, operation, status, latency and key id; never the key', async (t) => {
    const app = await loggedApp(t, 'trace');
    const id = 'log-line-1';
    const created = await request(app.url, 'POST', '/v1/pets', {
      key: app.key,
      body: { name: 'Logged', categoryId: 1 },
      headers: { 'x-request-id': id },
    });
    assert.equal(created.status, 201);
    await request(app.url, 'GET', '/v1/pets', { key: `${app.key}x`, headers: { 'x-request-id': 'bad-key' } });

    const lines = app.entries().filter((entry) => entry.msg === 'request');
    const line = lines.find((entry) => entry.requestId === id);
    assert.ok(line, JSON.stringify(lines));
    assert.equal(line.operation, 'createPet');
    assert.equal(line.status, 201);
    assert.equal(line.method, 'POST');
    assert.equal(line.url, '/v1/pets');
    assert.equal(line.keyId, app.keyId);
    assert.equal(typeof line.ms, 'number');
    assert.equal(line.level, 30, 'at info');
    const refused = lines.find((entry) => entry.requestId === 'bad-key');
    assert.equal(refused?.status, 401);
    assert.equal(refused?.keyId, undefined, 'no key id when the key was refused');
    assert.equal(lines.length, 2, 'one line per request, not two');

    const everything = app.lines.join('\n');
    assert.ok(!everything.includes(app.key), 'the key is never logged, even at trace');
    assert.doesNotMatch(everything, /psk_/);
  });

  test("a portal session's line names its owner's portal, not the key that made its link", async (t) => {
    const app = await loggedApp(t, 'info');
    const operator = await issueApiKey(app.store, () => new Date(), { name: 'operator', scopes: ['admin'] });
    const minted = await request(app.url, 'POST', '/v1/webhooks/portal-links', {
      key: operator.key,
      body: { owner: 'acme' },
    });
    assert.equal(minted.status, 201, minted.text);
    const token = new URL(minted.json.url).hash.slice(1);
    const traded = await request(app.url, 'POST', '/portal/session', {
      key: null,
      body: { token },
      headers: { origin: app.url },
    });
    assert.equal(traded.status, 200, traded.text);
    const cookie = (traded.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const listed = await request(app.url, 'GET', '/portal/v1/webhooks', {
      key: null,
      headers: { cookie, 'x-request-id': 'portal-line' },
    });
    assert.equal(listed.status, 200, listed.text);

    const line = app.entries().find((entry) => entry.msg === 'request' && entry.requestId === 'portal-line');
    assert.ok(line, app.lines.join('\n'));
    assert.equal(line.portal, 'acme', 'the session is named by its owner');
    assert.equal(line.keyId, undefined, 'not by the key that made its link');
    assert.doesNotMatch(JSON.stringify(line), /operator/);
    const mint = app.entries().find((entry) => entry.msg === 'request' && entry.operation === 'createPortalLink');
    assert.equal(mint?.keyId, operator.record.id, "the link's own request is the key's");
  });

  test('lines the log destination drops are counted in /metrics', async (t) => {
    const { url, stream } = await loggedApp(t, 'info');
    const dropped = async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^petstore_log_lines_dropped_total (\d+)$/m.exec(text)?.[1]);
    };
    assert.equal(await dropped(), 0);
    // What sonic-boom (pino.destination) emits for each line it drops past its maxLength.
    stream.emit('drop', '{"msg":"request"}\n');
    assert.equal(await dropped(), 1);
  });

  test('LOG_LEVEL is honoured by `serve`: at warn, no request lines', async (t) => {
    const port = await sparePort();
    const env = cliEnv(join(tempDir(t), 'petstore.db'), { LOG_LEVEL: 'warn', PORT: String(port) });
    await createKey(env, 'first');
    const child = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill('SIGKILL'));
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    await waitUntilUp(`http://127.0.0.1:${port}`);
    await fetch(`http://127.0.0.1:${port}/v1/pets`);
    child.kill('SIGTERM');
    await once(child, 'exit');
    assert.equal(stdout, '', 'nothing below warn was written');
  });

  test('at a terminal, `serve` writes readable lines instead of JSON', async (t) => {
    const port = await sparePort();
    const env = cliEnv(join(tempDir(t), 'petstore.db'), { PORT: String(port) });
    const key = await createKey(env, 'first');
    // script(1) gives the process a pseudo-terminal, as a person running `npm start` has.
    const child = spawn('script', ['-qfec', `${process.execPath} ${CLI} serve`, '/dev/null'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => child.kill('SIGKILL'));
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    await waitUntilUp(`http://127.0.0.1:${port}`);
    await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
    for (let i = 0; i < 50 && !/listPets/.test(output); i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    await once(child, 'exit');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what a terminal gets
    const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
    assert.match(plain, /INFO.*: request/);
    assert.match(plain, /operation: "listPets"/);
    assert.doesNotMatch(plain, /^\{"level"/m, 'no JSON lines');
    assert.ok(!plain.includes(key));
  });
});
