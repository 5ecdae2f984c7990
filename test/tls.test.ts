import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { describe, test } from 'node:test';
import { buildApp } from '../src/app.js';
import { issueApiKey } from '../src/services/api-keys.js';
import { BACKENDS } from './helpers/stores.js';
import { certificate } from './helpers/tls.js';

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
