import http from 'node:http';
import { PER_ENDPOINT } from '../src/webhooks/dispatcher.js';

/** One delivery as the receiver got it: what the bare client sends again and again. */
export interface SampleDelivery {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The headers of a delivery that a client sends anyway: the rest (the signature, its id) are resent as they came. */
const TRANSPORT_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

/**
 * What the service's deliveries are measured against: a bare node:http client posting `sample` to the
 * receiver at `url` for `seconds`, with as many requests in flight as the dispatcher sends one endpoint
 * (PER_ENDPOINT) over a keep-alive agent of as many connections. No claim, signing, record or log: the
 * receiver's and the loopback's pace. Deliveries per second.
 */
export async function bareDeliveries(url: string, sample: SampleDelivery, seconds: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: PER_ENDPOINT });
  const headers = Object.fromEntries(
    Object.entries(sample.headers).filter(([name]) => !TRANSPORT_HEADERS.has(name.toLowerCase())),
  );
  const body = Buffer.from(sample.body);
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const request = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': body.length } },
        (response) => {
          response.resume();
          response.on('end', resolve);
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const started = performance.now();
  const until = started + seconds * 1000;
  let sent = 0;
  const loop = async () => {
    while (performance.now() < until) {
      await post();
      sent++;
    }
  };
  try {
    await Promise.all(Array.from({ length: PER_ENDPOINT }, loop));
  } finally {
    agent.destroy();
  }
  return sent / ((performance.now() - started) / 1000);
}
