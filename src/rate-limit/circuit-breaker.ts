/**
 * Stops calling a dependency that just failed. Once a call fails (an error or a time-out), every call is
 * refused at once until a probe succeeds; the probe runs in the background every `probeEveryMs`, never
 * on a request, so a hung dependency costs a request one time-out at most per episode, not one each.
 */
export class CircuitBreaker {
  readonly #probe: () => Promise<unknown>;
  readonly #probeEveryMs: number;
  /** Set while open: what opened it, which is what a refused call reports. */
  #open: { readonly error: unknown } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(probe: () => Promise<unknown>, probeEveryMs: number) {
    this.#probe = probe;
    this.#probeEveryMs = probeEveryMs;
  }

  /** While open, the error that opened it (the call must not be made); undefined when calls may go ahead. */
  refusal(): { readonly error: unknown } | undefined {
    return this.#open;
  }

  /** A call failed: calls stop until a probe succeeds. */
  failed(error: unknown): void {
    if (this.#open !== undefined || this.#closed) return;
    this.#open = { error };
    this.#scheduleProbe();
  }

  #scheduleProbe(): void {
    this.#timer = setTimeout(() => {
      this.#probe().then(
        () => {
          this.#open = undefined;
        },
        () => {
          if (!this.#closed) this.#scheduleProbe();
        },
      );
    }, this.#probeEveryMs);
    // A probe pending must not keep the process alive.
    this.#timer.unref();
  }

  /** No more probes: the dependency is being closed. */
  dispose(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }
}
