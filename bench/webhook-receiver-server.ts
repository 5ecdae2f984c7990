/**
 * The bench's webhook receiver: dev/webhook-receiver.ts (the tests' own), answering every delivery 204 at
 * once, in a process of its own (started by bench/webhook-receiver.ts) so that receiving costs neither the
 * service nor the load generator. Over IPC it answers `{ stats: until }` with the figures of what arrived
 * since the last `{ reset: true }`, and `{ sample: true }` with the last delivery (for the bare client).
 * Usage: node --import tsx bench/webhook-receiver-server.ts
 */
import { type Received, startReceiver } from '../dev/webhook-receiver.js';
import { percentile } from './percentile.js';
import type { ReceiverQuestion, ReceiverStats } from './webhook-receiver.js';

if (process.send === undefined) throw new Error('started by bench/webhook-receiver.ts only');

const receiver = await startReceiver();
/** Each delivery's lag and id, taken once: the bench asks for the figures every 50 ms while they drain. */
let lags: number[] = [];
let ids = new Set<string>();

/** Arrival − the event's `timestamp`, when the change was recorded. */
function lag({ body, at }: Received): number {
  return at - Date.parse(String((JSON.parse(body) as { timestamp?: unknown }).timestamp));
}

function stats(until: number): ReceiverStats {
  const { received } = receiver;
  for (const request of received.slice(lags.length)) {
    lags.push(lag(request));
    ids.add(request.headers['webhook-id'] ?? '');
  }
  const sorted = [...lags].sort((a, b) => a - b);
  return {
    count: received.length,
    countUntil: received.filter(({ at }) => at <= until).length,
    distinctIds: ids.size,
    lagP50Ms: percentile(sorted, 50) ?? null,
    lagP99Ms: percentile(sorted, 99) ?? null,
    lagMaxMs: sorted.at(-1) ?? null,
    firstArrival: received[0]?.at ?? null,
    lastArrival: received.at(-1)?.at ?? null,
  };
}

process.on('message', (question: ReceiverQuestion) => {
  if ('reset' in question) {
    receiver.reset();
    lags = [];
    ids = new Set();
    process.send?.({ reset: true });
  } else if ('sample' in question) {
    const last = receiver.received.at(-1);
    process.send?.(last === undefined ? null : { headers: last.headers, body: last.body });
  } else {
    process.send?.(stats(question.stats ?? Number.POSITIVE_INFINITY));
  }
});
process.send({ port: receiver.port });
// Never outlive the bench.
process.on('disconnect', () => process.exit());
