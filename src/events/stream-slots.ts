import type { EventStreamLimits } from '../config/config.js';

/** Why a stream was refused: its key holds its bound of them, or the process holds its bound in all. */
export type StreamRefusal = 'key' | 'process';

/**
 * The live streams this process serves, counted per API key and in all: a stream takes a slot before it
 * starts and gives it back when it closes, however it ends.
 */
export class StreamSlots {
  readonly #limits: EventStreamLimits;
  readonly #byKey = new Map<number, number>();
  #open = 0;

  constructor(limits: EventStreamLimits) {
    this.#limits = limits;
  }

  /** A slot for a stream of `key`: its release (once is enough; more calls do nothing), or why not. */
  take(key: number): (() => void) | StreamRefusal {
    const held = this.#byKey.get(key) ?? 0;
    if (held >= this.#limits.perKey) return 'key';
    if (this.#open >= this.#limits.perProcess) return 'process';
    this.#byKey.set(key, held + 1);
    this.#open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open -= 1;
      const left = (this.#byKey.get(key) ?? 1) - 1;
      if (left > 0) this.#byKey.set(key, left);
      else this.#byKey.delete(key);
    };
  }
}
