import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventStreamLimits } from '../config/config.js';
import type { EventCursors } from '../domain/event-cursor.js';
import type { EventPosition } from '../domain/event-position.js';
import type { EventType } from '../domain/event-types.js';
import { ERRORS } from '../errors/catalogue.js';
import { EventStream, STREAM_BATCH } from '../events/event-stream.js';
import type { FeedBell } from '../events/feed-bell.js';
import type { FrameCache } from '../events/frame-cache.js';
import type { StreamSlots } from '../events/stream-slots.js';
import { toEvent } from '../representations/resources.js';
import { Event } from '../schemas/event.js';
import { ref } from '../schemas/ref.js';
import type { EventRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { cursorPosition } from './event-cursor-position.js';
import { ownerSeen } from './owner-access.js';

/** The 15 s the interface promises between comment lines, unless the app is built with another. */
export const KEEP_ALIVE_MS = 15_000;
/** The frames' data, through the same compiled serialiser as the feed's items. */
const EVENT = { ...ref(Event) };

export interface EventStreamRouteOptions {
  readonly store: Store;
  readonly cursors: EventCursors;
  readonly bell: FeedBell;
  readonly keepAliveMs: number;
  readonly retentionDays: number;
  readonly limits: EventStreamLimits;
  /** The streams open in this process, per owner: EVENT_STREAMS_PER_OWNER and EVENT_STREAMS bound them. */
  readonly slots: StreamSlots;
  /** Frames rendered once for every stream at their position. */
  readonly frames: FrameCache;
}

/**
 * Where a stream starts: after Last-Event-ID, else after `cursor`, else at the newest position. The header
 * wins because an EventSource reconnects to the URL it was opened with, the first `cursor` included, and
 * sends the id of the last frame it got in Last-Event-ID: that is where the client is.
 */
async function startOf(
  request: FastifyRequest,
  { store, cursors }: EventStreamRouteOptions,
  cursor: string | undefined,
  type: EventType | undefined,
): Promise<EventPosition> {
  const lastEventId = request.headers['last-event-id'];
  if (typeof lastEventId === 'string' && lastEventId !== '') {
    return cursorPosition(cursors, lastEventId, type, {
      notIssued: ERRORS.unknownLastEventId,
      otherType: ERRORS.lastEventIdForOtherType,
    });
  }
  if (cursor !== undefined) {
    return cursorPosition(cursors, cursor, type, {
      notIssued: ERRORS.unknownCursor,
      otherType: ERRORS.eventCursorForOtherType,
    });
  }
  return store.events.head();
}

/** The stream's start and its first events, or the 400 or 410 that answers instead. */
async function opening(
  request: FastifyRequest,
  options: EventStreamRouteOptions,
  { cursor, type }: { readonly cursor?: string | undefined; readonly type?: EventType | undefined },
): Promise<{ after: EventPosition; first: readonly EventRecord[] }> {
  const after = await startOf(request, options, cursor, type);
  const page = await options.store.events.list({ after, limit: STREAM_BATCH, type, owner: ownerSeen(request) });
  if (page.outcome === 'gone') throw ERRORS.eventsExpired.create(options.retentionDays);
  if (page.outcome === 'restored') throw ERRORS.eventsRestored.create();
  return { after, first: page.events };
}

/**
 * `GET /v1/events` with `Accept: text/event-stream`: Server-Sent Events, one frame per event
 * (`id: <cursor after it>`, `event: <type>`, `data: <the event JSON>`). Every check (key, scope, rate
 * limit, the bounds on streams, query, the 400s and the 410 of its start) answers before the first byte,
 * with the usual Error body; after that the stream only ends. Sent through Fastify's reply, so the
 * response carries the headers every other one does, and its request log line is written when it ends.
 */
export async function replyWithEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  options: EventStreamRouteOptions,
  query: { readonly cursor?: string | undefined; readonly type?: EventType | undefined },
): Promise<FastifyReply> {
  const { store, cursors, bell, keepAliveMs, limits, slots, frames } = options;
  const { type } = query;
  // Before any store read: a refused stream costs nothing. The route's `read` scope has found the key.
  const slot = slots.take(request.apiKey?.owner ?? '');
  if (slot === 'owner') throw ERRORS.streamsPerOwner.create(limits.perOwner);
  if (slot === 'process') throw ERRORS.streamsPerProcess.create(limits.perProcess);
  let start: Awaited<ReturnType<typeof opening>>;
  try {
    start = await opening(request, options, query);
  } catch (error) {
    slot();
    throw error;
  }
  const serialize = reply.compileSerializationSchema(EVENT) as (event: unknown) => string;
  const filter = type ?? '';
  const render = (record: EventRecord) =>
    `id: ${cursors.encode({ position: record.position, filter })}\nevent: ${record.type}\n` +
    `data: ${serialize(toEvent(record))}\n\n`;
  const frame = (record: EventRecord) => frames.frame(record, filter, render);
  const stream = new EventStream({
    events: store.events,
    bell,
    ...start,
    type,
    owner: ownerSeen(request),
    frame,
    keepAliveMs,
    bufferBytes: limits.bufferBytes,
    buffered: () => reply.raw.writableLength,
    log: request.log,
  });
  // However it ends: its client left, it was dropped, or the server stops.
  stream.once('close', slot);
  reply.type('text/event-stream; charset=utf-8');
  // Tells nginx not to buffer the stream (it would hold frames back until its buffer fills).
  reply.header('x-accel-buffering', 'no');
  // The connection ends with the stream: its client opens a new one to resume anyway, and a stopping
  // server would otherwise keep it open, idle, until the keep-alive time-out. (HTTP/2 has no such header.)
  if (request.raw.httpVersionMajor === 1) reply.header('connection', 'close');
  return reply.send(stream);
}
