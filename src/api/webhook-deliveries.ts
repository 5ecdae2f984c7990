import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { Pager } from '../http/pager.js';
import { errorResponses } from '../openapi/error-responses.js';
import { eventSeq } from '../representations/resources.js';
import { toDeliveryAttempt } from '../representations/webhook-endpoints.js';
import { NEXT_LINK_HEADER, PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { ref } from '../schemas/ref.js';
import { WebhookIdParams } from '../schemas/webhook.js';
import { DeliveryAttempt, WebhookDeliveriesQuery } from '../schemas/webhook-delivery.js';
import { visibleEndpoint } from './owner-access.js';
import type { RouteOptions } from './route-options.js';
import { SCOPE, SECURITY, TAGS } from './webhook-operation.js';

/** A webhook endpoint's deliveries log: every attempt to push an event to it, filtered by status or event. */
const routes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, cursors, links }) => {
  // Each endpoint's log has its own path, given with each page.
  const deliveries = new Pager(cursors.webhookDeliveries, links, '/v1/webhooks', app.storeCache);

  app.get(
    '/v1/webhooks/:webhookId/deliveries',
    {
      config: SCOPE,
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "List a webhook endpoint's delivery attempts",
        description:
          'One entry per attempt to deliver an event to the endpoint, newest first, paged with `cursor` ' +
          '(`Link: rel="next"` leads to older attempts, with the same filters). `status` keeps the attempts ' +
          'that ended so, `eventId` those of one event; `trigger` says why each was made.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: WebhookDeliveriesQuery,
        response: {
          200: Type.Array(ref(DeliveryAttempt), { description: 'A page of attempts.', headers: NEXT_LINK_HEADER }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const { webhookId } = request.params;
      const { limit = PAGE_LIMIT_DEFAULT, status, eventId, cursor } = request.query;
      const endpoint = await visibleEndpoint(store, request, webhookId);
      const path = `/v1/webhooks/${webhookId}/deliveries`;
      const filter = { status, eventSeq: eventId === undefined ? undefined : eventSeq(eventId) };
      // Newest first: the pager's position is the last (lowest) id shown, and the next page starts below it.
      // The id positions the page only: the serialiser leaves it out, as DeliveryAttempt has none.
      return deliveries.send(reply, { limit, filters: { status, eventId }, cursor, path }, ({ afterId, ...page }) =>
        store.webhooks
          .attempts(webhookId, { ...page, ...filter, beforeId: afterId === 0 ? undefined : afterId })
          .then((records) =>
            records.map((record) => ({ id: record.id, ...toDeliveryAttempt(record, endpoint.enabled) })),
          ),
      );
    },
  );
};

export const webhookDeliveryRoutes = fp(routes, {
  name: 'webhook-delivery-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
