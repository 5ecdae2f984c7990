import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { SampleDelivery } from './bare-deliveries.js';
import { startServerChild } from './children.js';
import type { Cleanup } from './cleanup.js';

const SERVER = fileURLToPath(new URL('./webhook-receiver-server.ts', import.meta.url));

/** What the receiver got since its last reset; times are Date.now() values, null before any delivery. */
export interface ReceiverStats {
  readonly count: number;
  /** Deliveries that arrived at or before the `until` asked for (all, when none was). */
  readonly countUntil: number;
  /** Distinct webhook-id values: equal to `count` unless a delivery was sent twice. */
  readonly distinctIds: number;
  /** Arrival − the event's timestamp. */
  readonly lagP50Ms: number | null;
  readonly lagP99Ms: number | null;
  readonly lagMaxMs: number | null;
  readonly firstArrival: number | null;
  readonly lastArrival: number | null;
}

/** What the bench asks the receiver's process over IPC. */
export type ReceiverQuestion = { readonly stats?: number } | { readonly reset: true } | { readonly sample: true };

/** The webhook receiver (dev/webhook-receiver.ts) in a process of its own, asked for its figures. */
export interface ReceiverProcess {
  /** Where the service is to send deliveries. */
  readonly url: string;
  stats(until?: number): Promise<ReceiverStats>;
  /** The last delivery it got since its last reset, as it came; null before any. */
  sample(): Promise<SampleDelivery | null>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Asks `child` one question at a time, in order, and resolves with its answer. */
function questioner(child: ChildProcess): <T>(question: ReceiverQuestion) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(question: ReceiverQuestion) => {
    const answer = last.then(
      () =>
        new Promise<T>((resolve, reject) => {
          const gone = () => reject(new Error('the webhook receiver exited'));
          child.once('exit', gone);
          child.once('message', (message: T) => {
            child.off('exit', gone);
            resolve(message);
          });
          child.send(question);
        }),
    );
    last = answer.catch(() => undefined);
    return answer;
  };
}

/** Starts the receiver's process; it is stopped at cleanup, or by stop(). */
export async function startReceiverProcess(cleanup: Cleanup): Promise<ReceiverProcess> {
  const { child, port, stop } = await startServerChild('the webhook receiver', SERVER, [], cleanup);
  const ask = questioner(child);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    stats: (until) => ask<ReceiverStats>(until === undefined ? {} : { stats: until }),
    sample: () => ask<SampleDelivery | null>({ sample: true }),
    reset: () => ask({ reset: true }).then(() => undefined),
    stop,
  };
}
