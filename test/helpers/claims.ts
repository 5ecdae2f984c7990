import type { ClaimQuery, DueDelivery } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';

/** A claim of up to 100 deliveries at `now`, up to 100 of each endpoint, a minute's lease. */
export function claimQuery(now: Date, overrides: Partial<ClaimQuery> = {}): ClaimQuery {
  return { now, leaseMs: 60_000, limit: 100, free: new Map(), freeOtherwise: 100, fullOwners: [], ...overrides };
}

/** Every delivery due within a minute, claimed at once, by endpoint and then event. */
export async function claimEverything(store: Store): Promise<DueDelivery[]> {
  const claimed = await store.deliveries.claim(claimQuery(new Date(Date.now() + 60_000)));
  return claimed.sort((a, b) => a.endpoint.id - b.endpoint.id || a.event.seq - b.event.seq);
}
