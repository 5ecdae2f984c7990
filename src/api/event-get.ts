import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { Scope } from '../domain/api-key.js';
import { ERRORS } from '../errors/catalogue.js';
import { errorResponses } from '../openapi/error-responses.js';
import { eventSeq, toEvent } from '../representations/resources.js';
import { Event } from '../schemas/event.js';
import { EventIdParams } from '../schemas/event-id.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import type { Store } from '../store/store.js';
import { ownerSeen } from './owner-access.js';

export interface EventGetOptions {
  readonly store: Store;
  /**
   * `read` under /v1; `webhooks` under /portal/v1, where a session (scope `webhooks` alone) looks up what its
   * endpoints' log entries sent (docs/decisions/portal-delivery-log.md).
   */
  readonly scope: Extract<Scope, 'read' | 'webhooks'>;
}

const DESCRIPTION =
  'One event, exactly as the feed, the stream and webhook deliveries show it: what a delivery sent, looked ' +
  'up by the `eventId` of its attempts. 404 when the id was never recorded, the event is no longer kept ' +
  "(`EVENT_RETENTION_DAYS`), or it is not on the key's feed: another owner's `webhook_endpoint.*` event, or a " +
  "test send's (`webhook.test`, whose `data` is only `{webhookId}`), answered alike. Events never change.";

/** One event of the feed by id, `GET /v1/events/{eventId}`: what the key's feed shows of it, or 404. */
const routes: FastifyPluginAsyncTypebox<EventGetOptions> = async (app, { store, scope }) => {
  app.get(
    '/v1/events/:eventId',
    {
      config: { scope },
      schema: {
        operationId: 'getEvent',
        summary: 'Get one event',
        description: DESCRIPTION,
        tags: ['events'],
        params: EventIdParams,
        querystring: NoQuery,
        response: {
          200: ref(Event, { description: 'The event.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const { eventId } = request.params;
      const event = await store.events.get(eventSeq(eventId), ownerSeen(request));
      if (event === undefined) throw ERRORS.eventNotKept.create(eventId);
      return toEvent(event);
    },
  );
};

export const eventGetRoute = fp(routes, {
  name: 'event-get-route',
  dependencies: ['openapi', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
