import type { CursorCodec } from './cursor.js';
import type { EventPosition } from './event-position.js';

/** A feed cursor: a position, and the `type` filter it was issued for ('' for none). */
export interface EventCursor {
  readonly position: EventPosition;
  readonly filter: string;
}

/** Feed cursors (`tx:seq:filter`), signed like page cursors and valid only for the feed. */
export class EventCursors {
  readonly #codec: CursorCodec;

  constructor(codec: CursorCodec) {
    this.#codec = codec;
  }

  encode(cursor: EventCursor): string {
    return this.#codec.seal(`${cursor.position.tx}:${cursor.position.seq}:${cursor.filter}`);
  }

  /** The cursor, or undefined when the text is not a feed cursor this service issued. */
  decode(text: string): EventCursor | undefined {
    const payload = this.#codec.open(text);
    const match = payload === undefined ? null : /^(\d{1,16}):(\d{1,16}):(.*)$/s.exec(payload);
    if (match === null) return undefined;
    const tx = Number(match[1]);
    const seq = Number(match[2]);
    if (!Number.isSafeInteger(tx) || !Number.isSafeInteger(seq)) return undefined;
    return { position: { tx, seq }, filter: match[3] ?? '' };
  }
}
