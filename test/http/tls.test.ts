import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { buildApp } from '../../src/app.js';
import { DEFAULT_LIMITS } from '../../src/server/fastify-options.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { BACKENDS } from '../helpers/stores.js';
import { certificate } from '../helpers/tls.js';

describe('HTTPS', () => {
  test('TLS handshake, HTTP/2 and HTTP/1.1 on one port, HSTS and the API headers', async (t) => {
    const backend = BACKENDS[0];
    assert.ok(backend);
    const fixture = await backend.create();
    t.after(() => fixture.dispose());
    const tls = certificate(t);
    const app = await buildApp({ store: fixture.store, tls: { cert: tls.cert, key: tls.key } });
    t.after(() => app.close());
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const { key } = await issueApiKey(fixture.store, () => new Date(), { name: 'tls' });

    const session = connect(url, { ca: tls.cert });
    const h2 = await new Promise<{ status: number; headers: Record<string, unknown>; body: string; alpn: string }>(
      (resolve, reject) => {
        const stream = session.request({ ':path': '/v1/pets', authorization: `Bearer ${key}` });
        let body = '';
        let headers: Record<string, unknown> = {};
        stream.setEncoding('utf8');
        stream.on('response', (h) => {
          headers = h;
        });
        stream.on('data', (chunk: string) => {
          body += chunk;
        });
        stream.on('end', () =>
          resolve({ status: Number(headers[':status']), headers, body, alpn: String(session.alpnProtocol) }),
        );
        stream.on('error', reject);
        stream.end();
      },
    );
    assert.equal(h2.alpn, 'h2', 'HTTP/2 was negotiated');
    assert.equal(h2.status, 200);
    assert.deepEqual(JSON.parse(h2.body), []);
    assert.equal(h2.headers['strict-transport-security'], 'max-age=31536000');
    assert.equal(h2.headers['cache-control'], 'no-store');
    assert.equal(h2.headers['x-content-type-options'], 'nosniff');
    // An open HTTP/2 session would hold the server's close for its idle timeout.
    await new Promise<void>((resolve) => session.close(resolve));

    const h1 = await new Promise<{ status: number; alpn: string | false | null; hsts: unknown }>((resolve, reject) => {
      const options = {
        ca: tls.cert,
        ALPNProtocols: ['http/1.1'],
        agent: false,
      } as import('node:https').RequestOptions;
      const req = httpsRequest(`${url}/healthz`, options, (res) => {
        const alpn = (res.socket as import('node:tls').TLSSocket).alpnProtocol;
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, alpn, hsts: res.headers['strict-transport-security'] }),
        );
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(h1, { status: 200, alpn: 'http/1.1', hsts: 'max-age=31536000' });

    await assert.rejects(
      new Promise((resolve, reject) => {
        const req = httpsRequest(`${url}/healthz`, { rejectUnauthorized: true, agent: false }, resolve);
        req.on('error', reject);
        req.end();
      }),
      /self-signed|unable to verify/,
      'an untrusted client refuses the certificate: the handshake is real',
    );
  });

  test('a graceful stop is not held by an idle HTTP/2 session', async (t) => {
    const backend = BACKENDS[0];
    assert.ok(backend);
    const fixture = await backend.create();
    t.after(() => fixture.dispose());
    const tls = certificate(t);
    const app = await buildApp({ store: fixture.store, tls: { cert: tls.cert, key: tls.key } });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const session = connect(url, { ca: tls.cert });
    t.after(() => session.destroy());
    await new Promise((resolve) => {
      const stream = session.request({ ':path': '/healthz' });
      stream.resume();
      stream.on('end', resolve);
      stream.end();
    });
    const started = Date.now();
    await app.close();
    assert.ok(Date.now() - started < 3000, `close took ${Date.now() - started} ms`);
  });

  test('idle HTTP/1.1-over-TLS connections and HTTP/2 sessions are closed after the idle time-out', async (t) => {
    const backend = BACKENDS[0];
    assert.ok(backend);
    const fixture = await backend.create();
    t.after(() => fixture.dispose());
    const tls = certificate(t);
    const app = await buildApp({
      store: fixture.store,
      tls: { cert: tls.cert, key: tls.key },
      limits: { ...DEFAULT_LIMITS, keepAliveTimeoutMs: 1000 },
    });
    t.after(() => app.close());
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = new URL(url);

    const h1 = tlsConnect({ host: '127.0.0.1', port: Number(port), ca: tls.cert, ALPNProtocols: ['http/1.1'] });
    const h1Idle = await new Promise<number>((resolve) => {
      let text = '';
      h1.setEncoding('utf8');
      h1.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('\r\n\r\n') && text.endsWith('}')) resolve(Date.now());
      });
      h1.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    });
    const session = connect(url, { ca: tls.cert });
    await new Promise((resolve) => {
      const stream = session.request({ ':path': '/healthz' });
      stream.resume();
      stream.on('end', resolve);
      stream.end();
    });
    const h2Idle = Date.now();
    const closedWithin = (emitter: { once(event: 'close', fn: () => void): unknown }, since: number) =>
      new Promise<number>((resolve) => {
        const timer = setTimeout(() => resolve(Number.POSITIVE_INFINITY), 5000);
        emitter.once('close', () => {
          clearTimeout(timer);
          resolve(Date.now() - since);
        });
      });
    const [h1Ms, h2Ms] = await Promise.all([closedWithin(h1, h1Idle), closedWithin(session, h2Idle)]);
    // Left open they would hold the server's close.
    h1.destroy();
    session.destroy();
    assert.ok(h1Ms >= 900 && h1Ms < 3000, `HTTP/1.1 over TLS closed after ${h1Ms} ms idle`);
    assert.ok(h2Ms >= 900 && h2Ms < 3000, `HTTP/2 session closed after ${h2Ms} ms idle`);
  });

  test('plain HTTP sends no HSTS, but keeps no-store and nosniff', async (t) => {
    const backend = BACKENDS[0];
    assert.ok(backend);
    const fixture = await backend.create();
    t.after(() => fixture.dispose());
    const app = await buildApp({ store: fixture.store });
    t.after(() => app.close());
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    for (const path of ['/healthz', '/v1/pets', '/nope']) {
      const response = await fetch(url + path);
      assert.equal(response.headers.get('strict-transport-security'), null);
      assert.equal(response.headers.get('cache-control'), 'no-store', path);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
    }
  });
});
