import type { EventPosition } from '../../domain/event-position.js';

/**
 * Looks at the feed's head every `intervalMs` and calls `onChange` when it moved; also after the first
 * look, since a watcher cannot tell whether an event committed between its start and that look. The head
 * only grows, and a read after a look that saw it shows every event up to it, so no event goes unnoticed.
 * A failed look (the database away) is only retried: the streams' own reads meet the outage themselves.
 * Returns the stop.
 */
export function pollHead(head: () => Promise<EventPosition>, intervalMs: number, onChange: () => void): () => void {
  let last: EventPosition | undefined;
  let looking = false;
  let stopped = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      const now = await head();
      const moved = last === undefined || now.tx !== last.tx || now.seq !== last.seq;
      if (moved && !stopped) onChange();
      last = now;
    } catch {
      // Retried at the next tick.
    } finally {
      looking = false;
    }
  };
  const timer = setInterval(look, intervalMs);
  // A watch must not keep a stopping process alive; its owner stops it on close.
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
