import { parentPort } from 'node:worker_threads';
import { startReceiver } from '../../dev/webhook-receiver.js';

/**
 * The receiver of thread-receiver.ts, on a thread of its own: answers 204 and posts each request's webhook id
 * and arrival time as it comes, then its URL once it listens.
 */
const receiver = await startReceiver({
  answer: (_n, request) => {
    parentPort?.postMessage({ id: request.headers['webhook-id'] ?? '', at: request.at });
    return { status: 204 };
  },
});
parentPort?.postMessage({ url: receiver.url });
