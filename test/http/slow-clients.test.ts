import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { DEFAULT_LIMITS, type ServerLimits } from '../../src/server/fastify-options.js';
import { addressKey } from '../../src/server/per-address-connections.js';
import { openConnection } from '../helpers/keep-alive.js';
import { cliEnv, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { BACKENDS } from '../helpers/stores.js';

const backend = BACKENDS[0] as (typeof BACKENDS)[number];
const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';
const HEALTHZ_CLOSE = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';

async function serve(t: TestContext, limits: Partial<ServerLimits> = {}): Promise<{ port: number }> {
  const fixture = await backend.create();
  t.after(() => fixture.dispose());
  const app = await buildApp({ store: fixture.store, limits: { ...DEFAULT_LIMITS, ...limits } });
  t.after(() => app.close());
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: Number(new URL(url).port) };
}

/** Opens a raw connection; resolves with everything received once the server closes it, and when. */
function rawClient(
  port: number,
  localAddress = '127.0.0.1',
): { socket: Socket; closed: Promise<{ data: string; at: number }> } {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
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

  test('one client address holds at most its share of connections; other addresses are still served', async (t) => {
    const { port } = await serve(t, { maxConnectionsPerAddress: 3 });
    const held = [rawClient(port), rawClient(port), rawClient(port)];
    // Connections that never sent a request would hold the server's close.
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const extra = rawClient(port);
      extra.socket.write(HEALTHZ_CLOSE);
      assert.equal((await extra.closed).data, '', 'the fourth connection from 127.0.0.1 was closed unanswered');
      // Another address (all of 127.0.0.0/8 is this machine) is not refused for what 127.0.0.1 holds.
      const other = rawClient(port, '127.0.0.2');
      other.socket.write(HEALTHZ_CLOSE);
      assert.match((await other.closed).data, /^HTTP\/1\.1 200 /);
      // A connection given up frees its place.
      held[0]?.socket.destroy();
      await held[0]?.closed;
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = rawClient(port);
      again.socket.write(HEALTHZ_CLOSE);
      assert.match((await again.closed).data, /^HTTP\/1\.1 200 /);
    } finally {
      for (const client of held) client.socket.destroy();
    }
  });

  test('an idle keep-alive connection is closed after the idle time-out, which responses announce', async (t) => {
    const { port } = await serve(t, { keepAliveTimeoutMs: 1000 });
    const connection = await openConnection(port);
    const response = await connection.exchange(HEALTHZ);
    const idleSince = Date.now();
    assert.match(response, /^HTTP\/1\.1 200 /);
    assert.match(response, /\r\nkeep-alive: timeout=1\r\n/i);
    const timer = setTimeout(() => connection.socket.destroy(), 5000);
    const closedAt = await connection.closed;
    clearTimeout(timer);
    const idle = closedAt - idleSince;
    assert.ok(idle >= 900 && idle < 3000, `closed by the server after ${idle} ms idle`);
  });

  test('by default idle keep-alive lasts 65 s and one address may hold 1000 connections', async (t) => {
    assert.equal(DEFAULT_LIMITS.maxConnectionsPerAddress, 1000);
    const { port } = await serve(t);
    const connection = await openConnection(port);
    try {
      assert.match(await connection.exchange(HEALTHZ), /\r\nkeep-alive: timeout=65\r\n/i);
    } finally {
      connection.socket.destroy();
    }
  });

  test('petstore serve takes the per-address bound from MAX_CONNECTIONS_PER_ADDRESS', async (t) => {
    const env = cliEnv(await freshDatabaseUrl(t, backend), { MAX_CONNECTIONS_PER_ADDRESS: '2' });
    const server = await startServe(t, env);
    const port = Number(new URL(server.url).port);
    const held = [rawClient(port), rawClient(port)];
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const extra = rawClient(port);
      extra.socket.write(HEALTHZ_CLOSE);
      assert.equal((await extra.closed).data, '', 'the third connection was closed unanswered');
    } finally {
      for (const client of held) client.socket.destroy();
    }
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  test('connections are counted per IPv4 address, and per /64 for IPv6', () => {
    assert.equal(addressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:ffff:0:0:9', '2001:0db8:0001:0002::a%eth0']) {
      assert.equal(addressKey(address), '2001:db8:1:2::/64', address);
    }
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('64:ff9b::198.51.100.1'), '64:ff9b:0:0::/64');
    assert.notEqual(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'));
  });
});
