import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'petstore:metrics-request';
const RESPONSE = 'petstore:metrics-response';
/** prom-client gives up on a worker that does not answer within 5 s; a scrape waits a little longer. */
const SCRAPE_TIMEOUT_MS = 6000;

interface ScrapeResponse {
  readonly type: typeof RESPONSE;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/**
 * In the primary of `serve --workers N`: answers a worker's scrape with every worker's metrics summed
 * (prom-client's AggregatorRegistry asks each worker over IPC), so /metrics reads the same whichever
 * worker the scrape lands on.
 */
export function aggregateWorkerMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message.type !== REQUEST) return;
    // The asking worker may have exited meanwhile (a stop, a crash): a send on a closed channel would
    // otherwise throw in the primary. The callback takes the error instead.
    const answer = (response: Omit<ScrapeResponse, 'type'>) => {
      if (worker.isConnected()) worker.send({ type: RESPONSE, ...response }, undefined, () => undefined);
    };
    aggregator.clusterMetrics().then(
      (text) => answer({ id: message.id ?? -1, text }),
      (error: Error) => answer({ id: message.id ?? -1, error: error.message }),
    );
  });
}

/**
 * In a worker, first thing: answer the primary's metrics requests at once, with nothing until the app's
 * registry exists, so a scrape while a worker starts does not wait for it to time out.
 */
export function joinWorkerMetrics(): void {
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([]);
}

/** In a worker: offers its registry to the primary's aggregation, and returns the cluster-wide scrape. */
export function clusterScrape(registry: Registry): () => Promise<string> {
  joinWorkerMetrics();
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        process.off('message', onMessage);
        reject(new Error('the primary did not answer the metrics scrape'));
      }, SCRAPE_TIMEOUT_MS);
      function onMessage(message: ScrapeResponse) {
        if (message.type !== RESPONSE || message.id !== id) return;
        clearTimeout(timer);
        process.off('message', onMessage);
        if (message.text === undefined) reject(new Error(message.error ?? 'metrics aggregation failed'));
        else resolve(message.text);
      }
      process.on('message', onMessage);
      process.send?.({ type: REQUEST, id });
    });
}
