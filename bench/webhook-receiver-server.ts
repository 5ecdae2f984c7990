/**
 * The webhook receiver: a bare node:http server that answers every delivery 204 at once and keeps, for
 * each, its arrival time, its webhook-id and its lag (arrival − the event's `timestamp`, when the change
 * was recorded). `GET /stats` reports them, `POST /reset` forgets them. It runs as its own process
 * (started by bench/webhook-receiver.ts), so that receiving costs neither the service nor the load
 * generator. Usage: node --import tsx bench/webhook-receiver-server.ts
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReceiverStats } from './webhook-receiver.js';

if (process.send === undefined) throw new Error('started by bench/webhook-receiver.ts only');

let arrivals: number[] = [];
let lags: number[] = [];
let ids = new Set<string>();

/** Nearest rank, as the load generators' percentiles. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? null;
}

function stats(until: number): ReceiverStats {
  const sorted = [...lags].sort((a, b) => a - b);
  return {
    count: arrivals.length,
    countUntil: arrivals.filter((at) => at <= until).length,
    distinctIds: ids.size,
    lagP50Ms: percentile(sorted, 50),
    lagP99Ms: percentile(sorted, 99),
    lagMaxMs: sorted.at(-1) ?? null,
    firstArrival: arrivals[0] ?? null,
    lastArrival: arrivals.at(-1) ?? null,
  };
}

function record(request: IncomingMessage, body: string, at: number): void {
  arrivals.push(at);
  const event = JSON.parse(body) as { id?: unknown; timestamp?: unknown };
  const id = request.headers['webhook-id'] ?? event.id;
  ids.add(String(id));
  lags.push(at - Date.parse(String(event.timestamp)));
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const at = Date.now();
    const url = new URL(request.url ?? '/', 'http://receiver');
    if (request.method === 'GET' && url.pathname === '/stats') {
      const until = Number(url.searchParams.get('until') ?? Number.POSITIVE_INFINITY);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats(until)));
      return;
    }
    if (request.method === 'POST' && url.pathname === '/reset') {
      arrivals = [];
      lags = [];
      ids = new Set();
      response.writeHead(204).end();
      return;
    }
    // A delivery: answered first, recorded after, so that recording never adds to what is measured.
    response.writeHead(204).end();
    record(request, Buffer.concat(chunks).toString('utf8'), at);
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
// Never outlive the bench.
process.on('disconnect', () => process.exit());
