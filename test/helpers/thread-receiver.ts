import type { TestContext } from 'node:test';
import { Worker } from 'node:worker_threads';
import { waitUntil } from '../../dev/eventually.js';

/** A request as a thread receiver saw it: its webhook id and Date.now() when the whole of it had arrived. */
export interface Arrival {
  readonly id: string;
  readonly at: number;
}

export interface ThreadReceiver {
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly arrivals: readonly Arrival[];
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  until(count: number, timeoutMs: number): Promise<void>;
}

/**
 * A webhook receiver (dev/webhook-receiver.ts) on a worker thread, ended with the test: its clock reads each
 * arrival on an event loop of its own, which the test's services and clients, busy on the main thread, do
 * not delay. For what a receiver's own timing sees, such as a rate limit's.
 */
export async function startThreadReceiver(t: TestContext): Promise<ThreadReceiver> {
  // The thread's module is TypeScript, as the tests are: tsx loads it there (a test file's process does not
  // hand its own loader on to a worker thread).
  const module = new URL('./thread-receiver-worker.ts', import.meta.url).href;
  const load = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(module)}, ${JSON.stringify(module)}))`;
  const worker = new Worker(load, { eval: true });
  t.after(() => worker.terminate());
  const arrivals: Arrival[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    worker.on('message', (message: Arrival | { url: string }) => {
      if ('url' in message) resolve(message.url);
      else arrivals.push(message);
    });
    worker.once('error', reject);
  });
  return {
    url,
    arrivals,
    until: (count, timeoutMs) =>
      waitUntil(
        () => `thread receiver: ${count} requests (${arrivals.length} got)`,
        () => arrivals.length >= count,
        { timeoutMs, everyMs: 20 },
      ),
  };
}
