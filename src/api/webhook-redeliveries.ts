import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { parseRfc3339, RFC3339_RULE } from '../domain/rfc3339.js';
import { ERRORS } from '../errors/catalogue.js';
import { errorResponses } from '../openapi/error-responses.js';
import { eventSeq } from '../representations/resources.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import { WebhookIdParams } from '../schemas/webhook.js';
import { RecoveryAccepted, ResendAccepted, WebhookRecovery, WebhookResend } from '../schemas/webhook-redelivery.js';
import { ownerSeen, visibleEndpoint } from './owner-access.js';
import type { RouteOptions } from './route-options.js';
import { SCOPE, SECURITY, TAGS, WITH_BODY } from './webhook-operation.js';

export interface RedeliveryRouteOptions extends RouteOptions {
  /** EVENT_RETENTION_DAYS: a recovery reaches back this far, no further. */
  readonly eventRetentionDays: number;
}

const DAY_MS = 86_400_000;

/** A date-time of the body the schema's pattern let through, or 400 naming it when its date does not exist. */
export function instant(text: string, where: string): Date {
  const at = parseRfc3339(text);
  if (at === undefined) throw ERRORS.brokenRule.create(where, RFC3339_RULE);
  return at;
}

/** Sending deliveries to an endpoint again, as an operator asks: one event, or the failed ones of a time window. */
const routes: FastifyPluginAsyncTypebox<RedeliveryRouteOptions> = async (app, { store, clock, eventRetentionDays }) => {
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
          'still be kept (`EVENT_RETENTION_DAYS`) and of a type the endpoint subscribes to; one about another ' +
          "owner's endpoint is answered as one that does not exist. If a delivery of it to the endpoint is " +
          'pending already, nothing is added. A disabled endpoint accepts it too; it waits until the endpoint ' +
          'is enabled, and the answer says so (`endpointEnabled: false`).',
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
      await visibleEndpoint(store, request, webhookId);
      // An event the caller may not see on the feed reads as one never recorded, its type untold.
      const query = { endpointId: webhookId, eventSeq: eventSeq(eventId), now: clock(), owner: ownerSeen(request) };
      const result = await store.redeliveries.resend(query);
      switch (result.outcome) {
        case 'endpoint_not_found':
          throw ERRORS.webhookNotFound.create(webhookId);
        case 'event_not_found':
          throw ERRORS.eventNotKept.create(eventId);
        case 'not_subscribed':
          throw ERRORS.eventNotSubscribed.create(webhookId, eventId, result.type);
      }
      const queued = result.outcome === 'queued';
      return reply.code(202).send({ eventId, status: 'pending' as const, queued, endpointEnabled: result.enabled });
    },
  );

  app.post(
    '/v1/webhooks/:webhookId/recover',
    {
      config: SCOPE,
      schema: {
        operationId: 'recoverWebhookDeliveries',
        summary: "Send a webhook endpoint's failed deliveries again",
        description:
          'Queues again every delivery to the endpoint whose last attempt failed and whose event was recorded ' +
          'in [`since`, `until`): each with the same `webhook-id`, its attempts afresh (`trigger: recover`), ' +
          'sent oldest first by the normal deliveries, at their pace. `until` is now by default; `since` must ' +
          'not be after it, nor older than `EVENT_RETENTION_DAYS`. Running it again, or on two instances at ' +
          'once, queues nothing twice. A disabled endpoint accepts it too; the deliveries wait until it is ' +
          'enabled, and the answer says so (`endpointEnabled: false`).',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: NoQuery,
        body: ref(WebhookRecovery),
        response: {
          202: ref(RecoveryAccepted, { description: 'How many failed deliveries were queued.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', ...WITH_BODY),
        },
      },
    },
    async (request, reply) => {
      const { webhookId } = request.params;
      await visibleEndpoint(store, request, webhookId);
      const now = clock();
      const since = instant(request.body.since, 'body.since');
      const until = request.body.until === undefined ? now : instant(request.body.until, 'body.until');
      if (since > until) throw ERRORS.sinceAfterUntil.create();
      if (since.getTime() < now.getTime() - eventRetentionDays * DAY_MS) {
        throw ERRORS.sinceBeyondRetention.create(eventRetentionDays);
      }
      const recovered = await store.redeliveries.recover({ endpointId: webhookId, since, until });
      if (recovered === undefined) throw ERRORS.webhookNotFound.create(webhookId);
      return reply.code(202).send({ queued: recovered.queued, endpointEnabled: recovered.enabled });
    },
  );
};

export const webhookRedeliveryRoutes = fp(routes, {
  name: 'webhook-redelivery-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
