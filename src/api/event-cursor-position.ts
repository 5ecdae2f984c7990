import type { EventCursors } from '../domain/event-cursor.js';
import type { EventPosition } from '../domain/event-position.js';
import type { ErrorKind } from '../errors/api-error.js';

/** The 400s of a position sent back: where it came from (the `cursor` query, the Last-Event-ID header) names them. */
export interface CursorRefusals {
  readonly notIssued: ErrorKind<[]>;
  readonly otherType: ErrorKind<[string]>;
}

/** The position of a feed cursor: refused unless this service issued it, for the same `type` filter. */
export function cursorPosition(
  cursors: EventCursors,
  text: string,
  type: string | undefined,
  refusals: CursorRefusals,
): EventPosition {
  const decoded = cursors.decode(text);
  if (decoded === undefined) throw refusals.notIssued.create();
  if (decoded.filter !== (type ?? '')) {
    throw refusals.otherType.create(decoded.filter === '' ? 'no type filter' : `type=${decoded.filter}`);
  }
  return decoded.position;
}
