import type { PurgeResult } from '../records.js';

/** Events, and log entries, removed per write by retention, so a large purge never holds its locks for long. */
export const PURGE_BATCH = 5000;

/** What one write of a purge removed and ended. */
export interface PurgeBatch extends PurgeResult {
  /** Deliveries log entries removed (those of attempts made before the retention's line). */
  readonly logEntries: number;
}

/** Runs a purge's writes until one removes less than a batch of both events and log entries: then none is left. */
export async function purgeInBatches(batch: () => Promise<PurgeBatch>): Promise<PurgeResult> {
  let events = 0;
  let expired = 0;
  for (;;) {
    const done = await batch();
    events += done.events;
    expired += done.expired;
    if (done.events < PURGE_BATCH && done.logEntries < PURGE_BATCH) return { events, expired };
  }
}
