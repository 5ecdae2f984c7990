export interface SlotBounds {
  /** Attempts in flight to one endpoint at most, once it has answered with success often enough. */
  readonly perEndpoint: number;
  /**
   * Attempts in flight at most, together, to endpoints below `perEndpoint`: new ones, and failing ones.
   * Endpoints that answer keep their slots however many others hang.
   */
  readonly trial: number;
}

interface Endpoint {
  readonly owner: string;
  /** Attempts it may have in flight now: doubles with each success, halves with each failure. */
  limit: number;
  inFlight: number;
  /** Date.now() when an attempt to it last began or ended. */
  usedAt: number;
}

/** What a claim may take: free slots of the endpoints known here, and of any other but those of full owners. */
export interface FreeSlots {
  readonly free: ReadonlyMap<number, number>;
  readonly freeOtherwise: number;
  /** Owners whose endpoints hold their share of the trial slots: their other endpoints get none either. */
  readonly fullOwners: readonly string[];
}

/** An endpoint idle this long, with nothing in flight, is forgotten: it starts again from one slot. */
const FORGET_AFTER_MS = 60_000;

/**
 * How many attempts each endpoint may have in flight, learned from its answers the way TCP learns a
 * window: an endpoint starts with one, each success doubles its limit up to `perEndpoint`, each failure
 * (an error status, a time-out, no connection) halves it down to one. An endpoint that hangs is never
 * trusted with a second attempt, and one that starts hanging loses its share as its attempts time out.
 * Endpoints below `perEndpoint` share the `trial` bound, so a crowd of hanging ones cannot take every
 * slot: the endpoints that answer keep theirs. One owner's endpoints hold at most half of the trial slots,
 * so a crowd of one partner's new or failing endpoints leaves the other half to every other partner's.
 * Per process: each instance learns on its own.
 */
export class EndpointSlots {
  readonly #bounds: SlotBounds;
  readonly #endpoints = new Map<number, Endpoint>();

  constructor(bounds: SlotBounds) {
    this.#bounds = bounds;
  }

  /**
   * What the next claim may take. The trial bound is shared by every endpoint below its full share, so one
   * claim may overshoot it by what it takes at once (the claim's own limit bounds that).
   */
  free(now: number): FreeSlots {
    const { perEndpoint, trial } = this.#bounds;
    const ownerShare = Math.max(1, Math.floor(trial / 2));
    let trialInFlight = 0;
    const byOwner = new Map<string, number>();
    for (const [id, endpoint] of this.#endpoints) {
      if (endpoint.inFlight === 0 && now - endpoint.usedAt > FORGET_AFTER_MS) this.#endpoints.delete(id);
      else if (endpoint.limit < perEndpoint) {
        trialInFlight += endpoint.inFlight;
        byOwner.set(endpoint.owner, (byOwner.get(endpoint.owner) ?? 0) + endpoint.inFlight);
      }
    }
    const trialLeft = Math.max(0, trial - trialInFlight);
    const free = new Map<number, number>();
    for (const [id, { owner, limit, inFlight }] of this.#endpoints) {
      const own = limit - inFlight;
      const ownerLeft = ownerShare - (byOwner.get(owner) ?? 0);
      free.set(id, Math.max(0, limit < perEndpoint ? Math.min(own, trialLeft, ownerLeft) : own));
    }
    const fullOwners = [...byOwner].filter(([, inFlight]) => inFlight >= ownerShare).map(([owner]) => owner);
    return { free, freeOtherwise: Math.min(1, trialLeft), fullOwners };
  }

  /** An attempt to `endpoint`, of `owner`, began. */
  begin(endpoint: number, owner: string, now: number): void {
    const known = this.#endpoints.get(endpoint);
    if (known === undefined) this.#endpoints.set(endpoint, { owner, limit: 1, inFlight: 1, usedAt: now });
    else {
      known.inFlight++;
      known.usedAt = now;
    }
  }

  /** An attempt to `endpoint` ended: its request is over, delivered or not. */
  end(endpoint: number, delivered: boolean, now: number): void {
    const known = this.#endpoints.get(endpoint);
    if (known === undefined) return;
    known.inFlight--;
    known.usedAt = now;
    known.limit = delivered
      ? Math.min(this.#bounds.perEndpoint, known.limit * 2)
      : Math.max(1, Math.floor(known.limit / 2));
  }
}
