import type { EventStreamLimits } from '../config/config.js';

/** Why a stream was refused: its owner's keys hold their bound of them, or the process holds its bound in all. */
export type StreamRefusal = 'owner' | 'process';

/**
 * The live streams this process serves, counted per owner (all its keys together, so a consumer
 * holding many keys cannot take the whole process's bound) and in all: a stream takes a slot before it
 * starts and gives it back when it closes, however it ends.
 */
export class StreamSlots {
  readonly #limits: EventStreamLimits;
  readonly #byOwner = new Map<string, number>();
  #open = 0;

  constructor(limits: EventStreamLimits) {
    this.#limits = limits;
  }

  /** A slot for a stream of `owner`: its release (once is enough; more calls do nothing), or why not. */
  take(owner: string): (() => void) | StreamRefusal {
    const held = this.#byOwner.get(owner) ?? 0;
    if (held >= this.#limits.perOwner) return 'owner';
    if (this.#open >= this.#limits.perProcess) return 'process';
    this.#byOwner.set(owner, held + 1);
    this.#open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open -= 1;
      const left = (this.#byOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.#byOwner.set(owner, left);
      else this.#byOwner.delete(owner);
    };
  }
}
