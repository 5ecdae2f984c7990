import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { ERRORS } from '../errors/catalogue.js';
import { errorResponses } from '../openapi/error-responses.js';
import { eventId } from '../representations/resources.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import { WebhookIdParams } from '../schemas/webhook.js';
import { TestSendAccepted } from '../schemas/webhook-test.js';
import { visibleEndpoint } from './owner-access.js';
import type { RouteOptions } from './route-options.js';
import { SCOPE, SECURITY, TAGS } from './webhook-operation.js';

/** A test send: one signed `webhook.test` delivery to one endpoint, before any real event exists. */
const routes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, clock }) => {
  app.post(
    '/v1/webhooks/:webhookId/test',
    {
      config: SCOPE,
      schema: {
        operationId: 'sendWebhookTest',
        summary: 'Send a test event to a webhook endpoint',
        description:
          'Queues a `webhook.test` event (`data: {webhookId}`) for this endpoint alone, whatever its ' +
          'subscription: signed and sent by the normal deliveries, retried on the schedule, and logged in its ' +
          'deliveries (`trigger: test`). It has an event id of its own, its `webhook-id`, but is never on the ' +
          'feed or the stream. No body. A disabled endpoint accepts it too; it waits until the endpoint is ' +
          'enabled, and the answer says so (`endpointEnabled: false`).',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: NoQuery,
        response: {
          202: ref(TestSendAccepted, { description: 'Queued.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const { webhookId } = request.params;
      await visibleEndpoint(store, request, webhookId);
      const sent = await store.redeliveries.sendTest({ endpointId: webhookId, now: clock() });
      if (sent === undefined) throw ERRORS.webhookNotFound.create(webhookId);
      return reply.code(202).send({ eventId: eventId(sent.seq), endpointEnabled: sent.enabled });
    },
  );
};

export const webhookTestSendRoutes = fp(routes, {
  name: 'webhook-test-send-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
