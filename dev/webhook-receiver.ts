import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitUntil } from './eventually.js';

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
 * What to answer the n-th request (0-based): a status (with headers and a body, after a delay; with
 * `endless`, the start of a body that never ends), or no answer at all.
 */
export type Answer = (
  n: number,
  request: Received,
) =>
  | { status: number; headers?: Record<string, string>; body?: string | Buffer; delayMs?: number; endless?: boolean }
  | 'hang';

export interface Receiver {
  readonly url: string;
  readonly port: number;
  /** Every request since the start or the last reset, in arrival order. */
  readonly received: readonly Received[];
  /** TCP connections accepted, whatever came over them. */
  connections(): number;
  /** The webhook-id of every request, in arrival order. */
  ids(): string[];
  /** Resolves once `check` holds for what arrived; rejects after `timeoutMs`. */
  until(check: (received: readonly Received[]) => boolean, timeoutMs: number): Promise<void>;
  /** Forgets what arrived so far (the counts start again from 0). */
  reset(): void;
  close(): Promise<void>;
}

function headersOf(request: http.IncomingMessage): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.join(', ') : `${value}`,
    ]),
  );
}

/**
 * The webhook receiver of the tests and the bench: a bare node:http server on 127.0.0.1 (a given port, or
 * a free one) that answers each request as `answer` says (204 at once by default) and keeps what it got.
 */
export async function startReceiver({
  answer = () => ({ status: 204 }),
  port = 0,
}: {
  answer?: Answer | undefined;
  port?: number | undefined;
} = {}): Promise<Receiver> {
  let received: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Received = {
        path: req.url ?? '',
        headers: headersOf(req),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const reply = answer(received.length, request);
      received.push(request);
      if (reply === 'hang') return;
      const send = () => {
        res.writeHead(reply.status, reply.headers);
        if (reply.endless === true) res.write('{"received":');
        else res.end(reply.body);
      };
      // At once unless a delay is asked for: a timer would add its millisecond to every delivery the bench times.
      if (reply.delayMs === undefined) send();
      else setTimeout(send, reply.delayMs);
    });
  });
  server.on('connection', () => connections++);
  // It stands in for many receivers (a thousand endpoints in one test), each of which would have an accept
  // queue of its own: with Node's 511, a busy process let new connections overflow it, and the kernel's
  // SYN retries (1, 3, 7, 15, 31 s) then outlasted the sender's 30 s time-out. The kernel caps it at somaxconn.
  await new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 4096 }, resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    get received() {
      return received;
    },
    connections: () => connections,
    ids: () => received.map((request) => request.headers['webhook-id'] ?? ''),
    until: (check, timeoutMs) =>
      waitUntil(
        () => `receiver: what was expected (${received.length} got)`,
        () => check(received),
        { timeoutMs, everyMs: 10 },
      ),
    reset() {
      received = [];
      connections = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
