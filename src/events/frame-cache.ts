import type { EventRecord } from '../store/records.js';

/**
 * Each event's Server-Sent Events frame, rendered once for every stream at that position with the same
 * filter: streams share the bytes (a Buffer pushed to a stream is not copied), instead of each rendering
 * its own copy, 300 streams making 300 copies of every event. The newest `max` frames are kept; a stream
 * further behind renders its own, as before.
 */
export class FrameCache {
  readonly #frames = new Map<string, Buffer>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  frame(record: EventRecord, filter: string, render: (record: EventRecord) => string): Buffer {
    const key = `${record.position.tx}.${record.seq}|${filter}`;
    let frame = this.#frames.get(key);
    if (frame === undefined) {
      frame = Buffer.from(render(record), 'utf8');
      // Maps keep insertion order: the first key is the oldest frame.
      if (this.#frames.size >= this.#max) this.#frames.delete(this.#frames.keys().next().value as string);
      this.#frames.set(key, frame);
    }
    return frame;
  }
}
