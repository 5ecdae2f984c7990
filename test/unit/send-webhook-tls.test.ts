import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { sendWebhook } from '../../src/webhooks/send-webhook.js';
import { certificate } from '../helpers/tls.js';

// Over TLS the signing headers are asked for once the handshake is done (send-webhook.ts), on a new
// connection and on one the agent keeps; the service's own agents trust only public CAs, so this one
// trusts the test's certificate instead.
test('over HTTPS a webhook is signed once its connection is secure, new or kept alive', async (t) => {
  const { cert, key } = certificate(t);
  const got: { signature: string | undefined; body: string }[] = [];
  const server = https.createServer({ cert, key }, (request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => {
      got.push({ signature: request.headers['webhook-signature'] as string | undefined, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const agent = new https.Agent({
    keepAlive: true,
    ca: cert,
    servername: 'localhost',
    checkServerIdentity: () => undefined,
  });
  t.after(() => agent.destroy());
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
  const options = {
    policy: { allowPrivate: true, lookup: async () => [{ address: '127.0.0.1' }] },
    timeoutMs: 5000,
    signal: new AbortController().signal,
    agent: () => agent,
  };
  let asked = 0;
  for (const n of [1, 2]) {
    const headers = async () => ({ 'content-type': 'application/json', 'webhook-signature': `v1,sig${++asked}` });
    const result = await sendWebhook({ url, headers, body: `{"n":${n}}` }, options);
    assert.deepEqual([result.delivered, result.responseStatus], [true, 204], result.error);
  }
  assert.deepEqual(got, [
    { signature: 'v1,sig1', body: '{"n":1}' },
    { signature: 'v1,sig2', body: '{"n":2}' },
  ]);
});
