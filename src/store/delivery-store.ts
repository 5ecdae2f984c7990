import type { DeliveryStatus } from '../domain/delivery-status.js';
import type { EventRecord } from './event-store.js';

/** What the dispatcher asks for: due deliveries, within its concurrency limits. */
export interface ClaimQuery {
  readonly now: Date;
  /** How long the claim holds: no instance claims the delivery again before now + leaseMs. */
  readonly leaseMs: number;
  /** Deliveries to claim at most. */
  readonly limit: number;
  /** Deliveries in flight per endpoint at most, counting those in `inFlight`. */
  readonly perEndpoint: number;
  /** Deliveries the caller has in flight, by endpoint id. */
  readonly inFlight: ReadonlyMap<number, number>;
}

/** A claimed delivery, with everything its attempt needs. */
export interface DueDelivery {
  readonly id: number;
  /** The number of this attempt: 1 for the first. */
  readonly attempt: number;
  /** The claim: the delivery is ours until then, and finish() records only while it still is. */
  readonly claimedUntil: Date;
  readonly endpoint: { readonly id: number; readonly url: string; readonly secret: string };
  readonly event: EventRecord;
}

/** How one attempt ended, and where the delivery stands after it. */
export interface AttemptOutcome {
  readonly delivery: DueDelivery;
  readonly status: DeliveryStatus;
  readonly responseStatus: number | undefined;
  readonly error: string | undefined;
  /** When the attempt started (its webhook-timestamp). */
  readonly attemptedAt: Date;
  /** When the next attempt is due, for `pending`. */
  readonly nextAttemptAt: Date | undefined;
}

export interface DeliveryStats {
  /** Deliveries waiting for an attempt to an enabled endpoint. */
  readonly pending: number;
  /** How long the oldest of them has waited since its event, in seconds; 0 when none waits. */
  readonly oldestPendingSeconds: number;
}

/**
 * Webhook deliveries, sending side: a pending delivery per (event, endpoint subscribed and enabled when the
 * event was recorded) is queued by the claims after the event's commit (sqlite/fan-out.ts,
 * postgres/fan-out.ts); instances claim due ones (a lease, so no two send
 * one at once), attempt them, and record each attempt. A delivery to a disabled endpoint waits, pending,
 * and goes out once the endpoint is enabled again.
 */
export interface DeliveryStore {
  /**
   * Claims due pending deliveries (next_attempt_at reached, no live claim) to enabled endpoints, oldest due
   * first, until now + leaseMs. Atomic across instances: a delivery is claimed by one caller at a time.
   * It queues first what was recorded since the last claim, at most `limit` events' worth per endpoint.
   */
  claim(query: ClaimQuery): Promise<DueDelivery[]>;
  /**
   * In one transaction: records the attempt in the deliveries log and moves the delivery on. Only while
   * the claim is still ours: false (nothing recorded) once another claim replaced it, or the delivery is gone.
   */
  finish(outcome: AttemptOutcome): Promise<boolean>;
  stats(now: Date): Promise<DeliveryStats>;
}
