import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { EventStore } from '../store/store.js';

/** What the bell rings: an open live stream. */
export interface FeedListener {
  /** Events may have committed: look. */
  wake(): void;
  /** The app is closing: end the stream. */
  end(): void;
}

/**
 * One wake-up per process for every live stream: a single watch of the store (a timer, and on PostgreSQL
 * one listening connection), running only while a stream is open, rather than one per stream.
 */
export class FeedBell {
  readonly #watch: (onChange: () => void) => () => void;
  readonly #listeners = new Set<FeedListener>();
  #stopWatching: (() => void) | undefined;
  #closed = false;

  constructor(watch: (onChange: () => void) => () => void) {
    this.#watch = watch;
  }

  /** The streams open now. */
  get listeners(): number {
    return this.#listeners.size;
  }

  /** Rings `listener` from now on; returns the unsubscribe. A bell already closed ends it at once. */
  subscribe(listener: FeedListener): () => void {
    if (this.#closed) {
      listener.end();
      return () => undefined;
    }
    this.#listeners.add(listener);
    this.#stopWatching ??= this.#watch(() => {
      for (const each of this.#listeners) each.wake();
    });
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size > 0) return;
      this.#stopWatching?.();
      this.#stopWatching = undefined;
    };
  }

  /** Ends every stream, and any opened later. */
  close(): void {
    this.#closed = true;
    // A copy: each listener unsubscribes as it ends.
    for (const listener of [...this.#listeners]) listener.end();
    this.#stopWatching?.();
    this.#stopWatching = undefined;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The live streams' wake-up (and their count, for tests and operators). */
    readonly feedBell: FeedBell;
  }
}

/**
 * The app's FeedBell. It ends the streams before the server closes: an open stream would hold its
 * connection, and so the close, for as long as its client stays.
 */
export const feedBell = fp(
  async (app: FastifyInstance, { events }: { events: EventStore }) => {
    const bell = new FeedBell((onChange) => events.watch(onChange));
    app.decorate('feedBell', bell);
    app.addHook('preClose', async () => bell.close());
  },
  { name: 'feed-bell' },
);
