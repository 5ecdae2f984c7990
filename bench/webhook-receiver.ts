import { fileURLToPath } from 'node:url';
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

export interface Receiver {
  /** Where the service is to send deliveries. */
  readonly hookUrl: string;
  stats(until?: number): Promise<ReceiverStats>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the receiver's process; it is stopped at cleanup, or by stop(). */
export async function startReceiver(cleanup: Cleanup): Promise<Receiver> {
  const { port, stop } = await startServerChild('the webhook receiver', SERVER, [], cleanup);
  const origin = `http://127.0.0.1:${port}`;
  return {
    hookUrl: `${origin}/hook`,
    async stats(until) {
      const query = until === undefined ? '' : `?until=${until}`;
      const response = await fetch(`${origin}/stats${query}`);
      if (response.status !== 200) throw new Error(`the webhook receiver's /stats answered ${response.status}`);
      return (await response.json()) as ReceiverStats;
    },
    async reset() {
      const response = await fetch(`${origin}/reset`, { method: 'POST' });
      if (response.status !== 204) throw new Error(`the webhook receiver's /reset answered ${response.status}`);
    },
    stop,
  };
}
