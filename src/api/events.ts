import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { EventCursors } from '../domain/event-cursor.js';
import { type EventPosition, FEED_START } from '../domain/event-position.js';
import { ERRORS } from '../errors/catalogue.js';
import type { Links } from '../http/links.js';
import { errorResponses } from '../openapi/error-responses.js';
import { Event, ListEventsQuery } from '../schemas/event.js';
import { PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { ref } from '../schemas/ref.js';
import type { Store } from '../store/store.js';
import { toEvent } from './representations.js';

export interface EventRouteOptions {
  readonly store: Store;
  readonly cursors: EventCursors;
  readonly links: Links;
  /** EVENT_RETENTION_DAYS: named in the 410 a cursor past it gets. */
  readonly retentionDays: number;
}

const FEED_DESCRIPTION =
  'Every change to pets and orders, oldest first. The `Link: rel="next"` header is always sent: the ' +
  'position after the last event returned (after an empty page, the same position), so polling it ' +
  'continues where the last page ended. A page never skips or repeats an event, also while other ' +
  'instances commit: an event committed later never appears before a position already handed out. ' +
  'Events are kept `EVENT_RETENTION_DAYS` (default 30); a cursor behind that is 410.';

/** The change feed, `GET /v1/events`. */
const routes: FastifyPluginAsyncTypebox<EventRouteOptions> = async (app, { store, cursors, links, retentionDays }) => {
  /** Where a request starts reading: after its cursor, or from the oldest event kept. */
  const startOf = (cursor: string | undefined, type: string | undefined): EventPosition | undefined => {
    if (cursor === undefined) return undefined;
    const decoded = cursors.decode(cursor);
    if (decoded === undefined) throw ERRORS.unknownCursor.create();
    if (decoded.filter !== (type ?? '')) {
      throw ERRORS.eventCursorForOtherType.create(decoded.filter === '' ? 'no type filter' : `type=${decoded.filter}`);
    }
    return decoded.position;
  };

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
          200: Type.Array(ref(Event), {
            description: 'A page of events, oldest first.',
            headers: {
              Link: { type: 'string', description: 'RFC 8288 link to the position after this page (`rel="next"`).' },
            },
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'gone'),
        },
      },
    },
    async (request, reply) => {
      const { limit = PAGE_LIMIT_DEFAULT, type, cursor } = request.query;
      const after = startOf(cursor, type);
      const page = await store.events.list({ after, limit, type });
      if (page.outcome === 'gone') throw ERRORS.eventsExpired.create(retentionDays);
      const position = page.events.at(-1)?.position ?? after ?? FEED_START;
      const next = cursors.encode({ position, filter: type ?? '' });
      reply.header('link', `<${links.to('/v1/events', { limit, type, cursor: next })}>; rel="next"`);
      return page.events.map(toEvent);
    },
  );
};

export const eventRoutes = fp(routes, {
  name: 'event-routes',
  dependencies: ['openapi', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
