import { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { EventPosition } from '../domain/event-position.js';
import type { EventType } from '../domain/event-types.js';
import type { EventRecord } from '../store/records.js';
import type { EventStore } from '../store/store.js';
import type { FeedBell, FeedListener } from './feed-bell.js';

/** Events read per look: a client that stopped reading holds at most one batch beyond its buffers. */
export const STREAM_BATCH = 100;
/** The comment line that keeps proxies from closing an idle stream (they commonly give up after 60 s). */
const KEEP_ALIVE = ': keep-alive\n\n';
/** Sent first, so the response's headers leave at once and the client sees the stream open. */
const OPENED = ': open\n\n';

export interface EventStreamOptions {
  readonly events: EventStore;
  readonly bell: FeedBell;
  /** The position the stream starts after. */
  readonly after: EventPosition;
  /** The first events after it, already read (the route read them to answer 410 before any frame). */
  readonly first: readonly EventRecord[];
  readonly type: EventType | undefined;
  /** Events about endpoints of this owner only; every owner's when undefined (admin keys). */
  readonly owner: string | undefined;
  /** The Server-Sent Events frame of one event (shared by the streams at its position: FrameCache). */
  readonly frame: (record: EventRecord) => Buffer;
  readonly keepAliveMs: number;
  /** What the stream may hold unsent, here and in its socket's write buffer, before it is dropped. */
  readonly bufferBytes: number;
  /** The bytes waiting in the response's write buffer (the socket's, on HTTP/1). */
  readonly buffered: () => number;
  /** The request's log: why a stream ended before its client left. */
  readonly log: FastifyBaseLogger;
}

/**
 * The body of one live stream: the frames of the events after its position, read in batches as its
 * client takes them. Readable's pull drives the reads, so a client that stops reading stops only its own
 * (the response's pipe stops pulling while the socket's buffer is full); the bell's wake-ups only mark
 * that there may be more. It ends when the bell closes, or when a read fails (the client reconnects with
 * Last-Event-ID and meets the outage as a 503, or resumes). A client that does not read is dropped once
 * more than `bufferBytes` wait for it: it costs bounded memory, and resumes with Last-Event-ID.
 */
export class EventStream extends Readable implements FeedListener {
  readonly #options: EventStreamOptions;
  #position: EventPosition;
  #backlog: readonly EventRecord[] | undefined;
  /** Events may exist after the position. */
  #pending = true;
  /** The consumer asked for more and was not given a batch since. */
  #demand = false;
  #reading = false;
  #ending = false;
  #finished = false;
  /** A look at what waits unsent is due (after the frames just pushed have been handed to the socket). */
  #measuring = false;
  readonly #keepAlive: NodeJS.Timeout;
  #unsubscribe: (() => void) | undefined;

  constructor(options: EventStreamOptions) {
    // Reads ahead up to the bound while its client is slow, so one that stopped reading reaches it.
    super({ highWaterMark: options.bufferBytes });
    this.#options = options;
    this.#position = options.after;
    this.#backlog = options.first;
    this.push(OPENED);
    this.#keepAlive = setInterval(() => {
      // Anything still buffered reaches the proxy soon enough by itself.
      if (this.readableLength === 0) this.#send(KEEP_ALIVE);
    }, options.keepAliveMs);
    this.#keepAlive.unref();
    // Last: a closed bell ends the stream at once.
    this.#unsubscribe = options.bell.subscribe(this);
  }

  wake(): void {
    this.#pending = true;
    void this.#pump();
  }

  end(): void {
    this.#ending = true;
    if (!this.#reading) this.#finish();
  }

  override _read(): void {
    this.#demand = true;
    void this.#pump();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#stop();
    callback(error);
  }

  async #pump(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    try {
      while (this.#demand && this.#pending && !this.#ending) {
        this.#pending = false;
        const backlog = this.#backlog;
        this.#backlog = undefined;
        const events = backlog ?? (await this.#read());
        if (this.destroyed) return;
        if (events === undefined) {
          this.#ending = true;
          return;
        }
        // After the backlog, one more read: it was read before this stream subscribed to the bell, so an
        // event committed in between rang no bell for it.
        if (events.length === STREAM_BATCH || backlog !== undefined) this.#pending = true;
        for (const record of events) {
          this.#position = record.position;
          if (!this.#send(this.#options.frame(record))) this.#demand = false;
        }
      }
    } finally {
      this.#reading = false;
      if (this.#ending) this.#finish();
    }
  }

  /** Pushes `chunk`; false when no more is wanted now. */
  #send(chunk: string | Buffer): boolean {
    const wanted = this.push(chunk);
    if (!this.#measuring) {
      this.#measuring = true;
      // Once the turn is over: the response corks its socket for a turn, so a batch of frames sits in the
      // socket's buffer until then even when the client reads at once.
      setImmediate(() => this.#dropIfUnread());
    }
    return wanted;
  }

  /** Drops the stream when more than its bound waits unsent: its client has stopped reading. */
  #dropIfUnread(): void {
    this.#measuring = false;
    if (this.destroyed) return;
    const unsent = this.readableLength + this.#options.buffered();
    if (unsent <= this.#options.bufferBytes) return;
    this.#options.log.info(
      { unsent },
      'event stream dropped: its client is not reading (it resumes with Last-Event-ID)',
    );
    this.destroy();
  }

  /** The next batch; undefined when the stream must end. */
  async #read(): Promise<readonly EventRecord[] | undefined> {
    const { events, type, owner, log } = this.#options;
    try {
      const page = await events.list({ after: this.#position, limit: STREAM_BATCH, type, owner });
      if (page.outcome === 'page') return page.events;
      log.warn('event stream ended: retention removed events it had not sent yet');
    } catch (error) {
      log.warn({ err: error }, 'event stream ended: reading the events failed');
    }
    return undefined;
  }

  #finish(): void {
    if (this.#finished || this.destroyed) return;
    this.#finished = true;
    this.#stop();
    this.push(null);
  }

  #stop(): void {
    clearInterval(this.#keepAlive);
    this.#unsubscribe?.();
  }
}
