import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { buildApp } from '../src/app.js';
import { DEFAULT_LIMITS, type ServerLimits } from '../src/server/fastify-options.js';
import { BACKENDS } from './helpers/stores.js';

const backend = BACKENDS[0] as (typeof BACKENDS)[number];

async function serve(t: TestContext, limits: Partial<ServerLimits> = {}): Promise<{ port: number }> {
  const fixture = await backend.create();
  t.after(() => fixture.dispose());
  const app = await buildApp({ store: fixture.store, limits: { ...DEFAULT_LIMITS, ...limits } });
  t.after(() => app.close());
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: Number(new URL(url).port) };
}

/** Opens a raw connection; resolves with everything received once the server closes it, and when. */
function rawClient(port: number): { socket: Socket; closed: Promise<{ data: string; at: number }> } {
  const socket = connect(port, '127.0.0.1');
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    data += chunk;
  });
  const closed = new Promise<{ data: string; at: number }>((resolve) => {
    socket.on('close', () => resolve({ data, at: Date.now() }));
    socket.on('error', () => undefined);
  });
  return { socket, closed };
}

describe('slow and greedy clients', () => {
  test('slowloris: a client trickling its headers is cut off after the header time-out', async (t) => {
    const { port } = await serve(t, { headersTimeoutMs: 800, timeoutCheckIntervalMs: 100 });
    const { socket, closed } = rawClient(port);
    const started = Date.now();
    socket.write('GET /v1/pets HTTP/1.1\r\nHost: localhost\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 200);
    t.after(() => clearInterval(trickle));
    const { at } = await closed;
    clearInterval(trickle);
    assert.ok(at - started < 3000, `cut off after ${at - started} ms`);
  });

  test('a client that stalls in the middle of its body is cut off after the request time-out', async (t) => {
    const { port } = await serve(t, { headersTimeoutMs: 500, requestTimeoutMs: 1000, timeoutCheckIntervalMs: 100 });
    const { socket, closed } = rawClient(port);
    const started = Date.now();
    socket.write(
      'POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na',
    );
    const { at } = await closed;
    assert.ok(at - started < 4000, `cut off after ${at - started} ms`);
  });

  test('oversized headers get 400 with the Error body and the connection is closed', async (t) => {
    const { port } = await serve(t);
    const { socket, closed } = rawClient(port);
    socket.write(`GET /v1/pets HTTP/1.1\r\nHost: localhost\r\nX-Junk: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
    const { data } = await closed;
    assert.match(data, /^HTTP\/1\.1 400 /);
    const body = JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(body, { code: 'invalid_request', message: 'the request headers are too large', status: 400 });
  });

  test('malformed HTTP gets 400 with the Error body', async (t) => {
    const { port } = await serve(t);
    const { socket, closed } = rawClient(port);
    socket.write('GET /v1/pets HTTP/1.1\r\nHost localhost\r\n\r\n');
    const { data } = await closed;
    assert.match(data, /^HTTP\/1\.1 400 /);
    assert.equal(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4)).code, 'invalid_request');
  });

  test('connections beyond the configured maximum are refused; the server keeps serving', async (t) => {
    const { port } = await serve(t, { maxConnections: 2 });
    const held = [rawClient(port), rawClient(port)];
    await new Promise((resolve) => setTimeout(resolve, 200));
    const extra = rawClient(port);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const { data } = await extra.closed;
    assert.equal(data, '', 'the extra connection was dropped unanswered');
    for (const client of held) client.socket.destroy();
    await Promise.all(held.map((client) => client.closed));
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(response.status, 200);
  });
});
