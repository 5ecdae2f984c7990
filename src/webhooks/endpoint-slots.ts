export interface SlotBounds {
  /** Attempts in flight to one endpoint at most, once it has answered with success often enough. */
  readonly perEndpoint: number;
  /**
   * Attempts in flight at most, together, to endpoints below `perEndpoint` (still learning, and failing
   * ones; an endpoint's first attempt takes none) among those begun less than `slowMs` ago. Endpoints
   * that answer keep their slots however many others hang.
   */
  readonly trial: number;
  /**
   * Attempts waiting longer than `slowMs` for an answer, together, past which an endpoint that hangs (one
   * such attempt in flight, or its last one failed slowly) gets no new attempt: the circuit is open.
   */
  readonly hanging: number;
  /** How long an attempt may wait for its answer before it counts as hanging rather than as a trial. */
  readonly slowMs: number;
}

interface Endpoint {
  readonly owner: string;
  /** Attempts it may have in flight now: doubles with each success, halves with each failure. */
  limit: number;
  /** When each attempt in flight began (Date.now()), oldest first. */
  readonly begun: number[];
  /** Its last attempt that ended failed after waiting `slowMs` or longer (a time-out, usually). */
  slowFailure: boolean;
  /** An attempt to it ended here; until then its one attempt is its first, which takes no trial slot. */
  tried: boolean;
  /** Date.now() when an attempt to it last began or ended. */
  usedAt: number;
}

/** What a claim may take: free slots of the endpoints known here, and of any other but those of full owners. */
export interface FreeSlots {
  /** Every endpoint known here; 0 for those that hang (their slots are in `probes`). */
  readonly free: ReadonlyMap<number, number>;
  readonly freeOtherwise: number;
  /** Owners whose endpoints hold their share of the trial slots: their other endpoints get none either. */
  readonly fullOwners: readonly string[];
  /**
   * The slots of endpoints known to hang, for a claim of their own after the others': a crowd of them
   * probing cannot take the turns of endpoints that answer.
   */
  readonly probes: ReadonlyMap<number, number>;
}

/** An endpoint idle this long, with nothing in flight, is forgotten: it starts again from one slot. */
const FORGET_AFTER_MS = 60_000;

/** The attempts counted in free(), each once. */
interface Counts {
  /** Begun less than slowMs ago, to endpoints below their full share: the trial slots taken. */
  trial: number;
  /** Waiting slowMs or longer, to any endpoint. */
  hanging: number;
  /** The trial slots taken, by owner. */
  readonly byOwner: Map<string, number>;
}

/**
 * How many attempts each endpoint may have in flight, learned from its answers the way TCP learns a
 * window: an endpoint starts with one, each success doubles its limit up to `perEndpoint`, each failure
 * (an error status, a time-out, no connection) halves it down to one. An endpoint that hangs is never
 * trusted with a second attempt, and one that starts hanging loses its share as its attempts time out.
 *
 * Endpoints below `perEndpoint` share the `trial` slots, but an attempt holds one only while it is young
 * (`slowMs`): one that waits longer moves to the `hanging` count. So a crowd of endpoints that never answer
 * (300, 1,000) cannot hold the trial slots for their whole time-out. An endpoint's first attempt here
 * takes no trial slot at all, nor its owner's share: nothing is known of it, and counted, one owner's
 * 1,000 new endpoints would start 128 first attempts per `slowMs`, 4 s before the last got its turn.
 * Once `hanging` attempts wait, an endpoint known to hang (an attempt waiting, or its last one failed
 * slowly) gets no new one, a circuit breaker that opens for the crowd: it probes again as others'
 * attempts time out. Sockets held by hanging attempts stay under `hanging` plus `trial`, plus one per
 * endpoint not seen hanging yet (a new endpoint's first attempt is never held back: nothing tells it from
 * a healthy one). One owner's endpoints hold at most half of the trial slots, so a crowd of one partner's
 * failing endpoints leaves the other half to every other partner's.
 * Per process: each instance learns on its own.
 */
export class EndpointSlots {
  readonly #bounds: SlotBounds;
  readonly #endpoints = new Map<number, Endpoint>();

  constructor(bounds: SlotBounds) {
    this.#bounds = bounds;
  }

  #count(now: number): Counts {
    const counts: Counts = { trial: 0, hanging: 0, byOwner: new Map() };
    for (const [id, endpoint] of this.#endpoints) {
      if (endpoint.begun.length === 0 && now - endpoint.usedAt > FORGET_AFTER_MS) {
        this.#endpoints.delete(id);
        continue;
      }
      const young = endpoint.begun.filter((at) => now - at < this.#bounds.slowMs).length;
      counts.hanging += endpoint.begun.length - young;
      if (endpoint.tried && endpoint.limit < this.#bounds.perEndpoint) {
        counts.trial += young;
        counts.byOwner.set(endpoint.owner, (counts.byOwner.get(endpoint.owner) ?? 0) + young);
      }
    }
    return counts;
  }

  /**
   * What the next claim may take. The trial bound is shared by every endpoint below its full share, so one
   * claim may overshoot it by what it takes at once (the claim's own limit bounds that).
   */
  free(now: number): FreeSlots {
    const { perEndpoint, trial, hanging, slowMs } = this.#bounds;
    const ownerShare = Math.max(1, Math.floor(trial / 2));
    const counts = this.#count(now);
    const trialLeft = Math.max(0, trial - counts.trial);
    const circuitsOpen = counts.hanging >= hanging;
    const free = new Map<number, number>();
    const probes = new Map<number, number>();
    for (const [id, endpoint] of this.#endpoints) {
      const { owner, limit, begun } = endpoint;
      const hangs = endpoint.slowFailure || begun.some((at) => now - at >= slowMs);
      const ownerLeft = ownerShare - (counts.byOwner.get(owner) ?? 0);
      const own = limit - begun.length;
      const slots = circuitsOpen && hangs ? 0 : limit < perEndpoint ? Math.min(own, trialLeft, ownerLeft) : own;
      free.set(id, hangs ? 0 : Math.max(0, slots));
      if (hangs && slots > 0) probes.set(id, slots);
    }
    const fullOwners = [...counts.byOwner].filter(([, taken]) => taken >= ownerShare).map(([owner]) => owner);
    // An endpoint not seen yet gets its first attempt whatever hangs: it cannot be told from a healthy one.
    return { free, freeOtherwise: Math.min(1, trialLeft), fullOwners, probes };
  }

  /**
   * True when `endpoint` has its full share and hangs in no way (nothing waiting `slowMs`, no slow failure):
   * the next of its deliveries may be claimed before its slots free up.
   */
  proven(endpoint: number, now: number): boolean {
    const known = this.#endpoints.get(endpoint);
    if (known === undefined || known.limit < this.#bounds.perEndpoint || known.slowFailure) return false;
    return !known.begun.some((at) => now - at >= this.#bounds.slowMs);
  }

  /**
   * Attempts `endpoint` may begin now within its own limit, for deliveries claimed for it already: one for an
   * endpoint not seen yet (its first attempt).
   */
  open(endpoint: number): number {
    const known = this.#endpoints.get(endpoint);
    return known === undefined ? 1 : Math.max(0, known.limit - known.begun.length);
  }

  /** An attempt to `endpoint`, of `owner`, began; true when it is the endpoint's first here (see `tried`). */
  begin(endpoint: number, owner: string, now: number): boolean {
    const known = this.#endpoints.get(endpoint);
    if (known === undefined) {
      this.#endpoints.set(endpoint, { owner, limit: 1, begun: [now], slowFailure: false, tried: false, usedAt: now });
      return true;
    }
    known.begun.push(now);
    known.usedAt = now;
    return false;
  }

  /** An attempt to `endpoint` ended: its request is over, delivered or not. */
  end(endpoint: number, delivered: boolean, now: number): void {
    const known = this.#endpoints.get(endpoint);
    if (known === undefined) return;
    // Attempts to one endpoint end about in the order they began; the oldest is the one counted as hanging.
    const begun = known.begun.shift() ?? now;
    known.usedAt = now;
    known.tried = true;
    known.slowFailure = !delivered && now - begun >= this.#bounds.slowMs;
    known.limit = delivered
      ? Math.min(this.#bounds.perEndpoint, known.limit * 2)
      : Math.max(1, Math.floor(known.limit / 2));
  }
}
