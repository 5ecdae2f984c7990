import http from 'node:http';
import type { TestContext } from 'node:test';
import { waitUntil } from '../../dev/eventually.js';

/** One request a receiver got. */
export interface Received {
  /** The request's path (and query), as sent. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Date.now() when the whole request had arrived. */
  readonly at: number;
}

/**
 * What to answer the n-th request (0-based): a status (with headers, after a delay; with `endless`, the
 * start of a body that never ends), or no answer at all.
 */
export type Answer = (
  n: number,
  request: Received,
) => { status: number; headers?: Record<string, string>; delayMs?: number; endless?: boolean } | 'hang';

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** TCP connections accepted, whatever came over them. */
  connections(): number;
  /** The webhook-id of every request, in arrival order. */
  ids(): string[];
  /** Resolves once `check` holds for what arrived; rejects after `timeoutMs`. */
  until(check: (received: Received[]) => boolean, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** A local webhook receiver on 127.0.0.1 (a given port, or a free one), closed after the test. */
export async function startReceiver(t: TestContext, answer: Answer = () => ({ status: 204 }), port = 0) {
  const received: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(', ') : `${value}`,
        ]),
      );
      const request: Received = {
        path: req.url ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const reply = answer(received.length, request);
      received.push(request);
      if (reply === 'hang') return;
      setTimeout(() => {
        res.writeHead(reply.status, reply.headers);
        if (reply.endless === true) res.write('{"received":');
        else res.end();
      }, reply.delayMs ?? 0);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.after(close);
  const receiver: Receiver = {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    received,
    connections: () => connections,
    ids: () => received.map((request) => request.headers['webhook-id'] ?? ''),
    until: (check, timeoutMs) =>
      waitUntil(
        () => `receiver: what was expected (${received.length} got)`,
        () => check(received),
        { timeoutMs, everyMs: 10 },
      ),
    close,
  };
  return receiver;
}
