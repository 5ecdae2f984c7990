import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { EventStreamLimits } from '../config/config.js';
import type { EventCursors } from '../domain/event-cursor.js';
import { type EventPosition, FEED_START } from '../domain/event-position.js';
import { ERRORS } from '../errors/catalogue.js';
import { STREAM_BATCH } from '../events/event-stream.js';
import { FrameCache } from '../events/frame-cache.js';
import { StreamSlots } from '../events/stream-slots.js';
import { acceptsEventStream } from '../http/accepts-event-stream.js';
import type { Links } from '../http/links.js';
import { errorResponses } from '../openapi/error-responses.js';
import { toEvent } from '../representations/resources.js';
import { Event, EventStreamBody, ListEventsQuery } from '../schemas/event.js';
import { PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { ref } from '../schemas/ref.js';
import type { Store } from '../store/store.js';
import { cursorPosition } from './event-cursor-position.js';
import { KEEP_ALIVE_MS, replyWithEventStream } from './event-stream-reply.js';
import { ownerSeen } from './owner-access.js';

export interface EventRouteOptions {
  readonly store: Store;
  readonly cursors: EventCursors;
  readonly links: Links;
  /** EVENT_RETENTION_DAYS: named in the 410 a cursor past it gets. */
  readonly retentionDays: number;
  /** Between the live stream's comment lines; KEEP_ALIVE_MS when absent. */
  readonly keepAliveMs?: number | undefined;
  /** Bounds on the live streams of this process. */
  readonly streams: EventStreamLimits;
}

const FEED_DESCRIPTION =
  'Every change to pets and orders, oldest first. The `Link: rel="next"` header is always sent: the ' +
  'position after the last event returned (after an empty page, the same position), so polling it ' +
  'continues where the last page ended. A page never skips or repeats an event, also while other ' +
  'instances commit: an event committed later never appears before a position already handed out. ' +
  'Events are kept `EVENT_RETENTION_DAYS` (default 30); a cursor behind that is 410.\n\n' +
  'With `Accept: text/event-stream` the same operation answers a live stream of Server-Sent Events instead: ' +
  'one frame per event, `id: <cursor after this event>`, `event: <type>`, `data: <the event JSON>`, in feed ' +
  'order, each event committed on any instance within 1 s. It starts after the `Last-Event-ID` header (what ' +
  'an EventSource sends when it reconnects: it wins over `cursor`), else after `cursor`, else at the newest ' +
  'position (nothing older is replayed); `type` filters it as it filters pages, `limit` does not apply. A ' +
  'comment line (`: keep-alive`) comes every 15 s; a server that stops ends its streams, and the client ' +
  'resumes elsewhere with `Last-Event-ID`. Errors (400, 401, 403, 410, 429) answer before the stream ' +
  'starts, as JSON.';

/**
 * Frames kept for the streams to share: ten batches, about 5 MB at 500 bytes an event. Streams within that
 * many events of the newest share them; one further behind renders its own.
 */
const SHARED_FRAMES = 10 * STREAM_BATCH;

/** The change feed, `GET /v1/events` (one event of it: event-get.ts). */
const routes: FastifyPluginAsyncTypebox<EventRouteOptions> = async (app, options) => {
  const { store, cursors, links, retentionDays } = options;
  const stream = {
    store,
    cursors,
    retentionDays,
    bell: app.feedBell,
    keepAliveMs: options.keepAliveMs ?? KEEP_ALIVE_MS,
    limits: options.streams,
    slots: new StreamSlots(options.streams),
    frames: new FrameCache(SHARED_FRAMES),
  };
  /** Where a request starts reading: after its cursor, or from the oldest event kept. */
  const startOf = (cursor: string | undefined, type: string | undefined): EventPosition | undefined =>
    cursor === undefined
      ? undefined
      : cursorPosition(cursors, cursor, type, {
          notIssued: ERRORS.unknownCursor,
          otherType: ERRORS.eventCursorForOtherType,
        });

  app.get(
    '/v1/events',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listEvents',
        summary: 'Read the change feed',
        description: FEED_DESCRIPTION,
        tags: ['events'],
        querystring: ListEventsQuery,
        response: {
          200: {
            description: 'A page of events, oldest first; with `Accept: text/event-stream`, the live stream.',
            headers: {
              Link: {
                type: 'string',
                description: 'RFC 8288 link to the position after this page (`rel="next"`); not on a stream.',
              },
            },
            content: {
              'application/json': { schema: Type.Array(ref(Event)) },
              'text/event-stream': { schema: EventStreamBody },
            },
          },
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'gone'),
        },
      },
    },
    async (request, reply) => {
      // GET only: a HEAD answer has no body to stream.
      if (request.method === 'GET' && acceptsEventStream(request.headers.accept)) {
        return replyWithEventStream(request, reply, stream, request.query);
      }
      const { limit = PAGE_LIMIT_DEFAULT, type, cursor } = request.query;
      const after = startOf(cursor, type);
      const page = await store.events.list({ after, limit, type, owner: ownerSeen(request) });
      if (page.outcome === 'gone') throw ERRORS.eventsExpired.create(retentionDays);
      if (page.outcome === 'restored') throw ERRORS.eventsRestored.create();
      const position = page.events.at(-1)?.position ?? after ?? FEED_START;
      const next = cursors.encode({ position, filter: type ?? '' });
      reply.header('link', `<${links.to('/v1/events', { limit, type, cursor: next })}>; rel="next"`);
      return page.events.map(toEvent);
    },
  );
};

export const eventRoutes = fp(routes, {
  name: 'event-routes',
  dependencies: ['openapi', 'auth', 'key-rate-limit', 'feed-bell'],
  encapsulate: true,
});
