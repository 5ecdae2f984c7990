import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { ERRORS } from '../errors/catalogue.js';
import { errorResponses } from '../openapi/error-responses.js';
import { eventSeq } from '../representations/resources.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import { WebhookIdParams } from '../schemas/webhook.js';
import { ResendAccepted, WebhookResend } from '../schemas/webhook-redelivery.js';
import type { RouteOptions } from './route-options.js';
import { SCOPE, SECURITY, TAGS, WITH_BODY } from './webhook-operation.js';

/** Sending deliveries to an endpoint again, as an operator asks: one event. */
const routes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, clock }) => {
  app.post(
    '/v1/webhooks/:webhookId/resend',
    {
      config: SCOPE,
      schema: {
        operationId: 'resendWebhookEvent',
        summary: 'Send one event to a webhook endpoint again',
        description:
          'Queues the event for the endpoint again, whatever its earlier outcome: with the same `webhook-id`, ' +
          'its attempts and retries starting afresh (`trigger: resend` in the deliveries log). The event must ' +
          'still be kept (`EVENT_RETENTION_DAYS`) and of a type the endpoint subscribes to. If a delivery of ' +
          'it to the endpoint is pending already, nothing is added. A disabled endpoint accepts it too; it ' +
          'waits until the endpoint is enabled.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: NoQuery,
        body: ref(WebhookResend),
        response: {
          202: ref(ResendAccepted, { description: 'Queued, or pending already.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', ...WITH_BODY),
        },
      },
    },
    async (request, reply) => {
      const { webhookId } = request.params;
      const { eventId } = request.body;
      const query = { endpointId: webhookId, eventSeq: eventSeq(eventId), now: clock() };
      const result = await store.redeliveries.resend(query);
      switch (result.outcome) {
        case 'endpoint_not_found':
          throw ERRORS.webhookNotFound.create(webhookId);
        case 'event_not_found':
          throw ERRORS.eventNotKept.create(eventId);
        case 'not_subscribed':
          throw ERRORS.eventNotSubscribed.create(webhookId, eventId, result.type);
      }
      return reply.code(202).send({ eventId, status: 'pending' as const });
    },
  );
};

export const webhookRedeliveryRoutes = fp(routes, {
  name: 'webhook-redelivery-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
