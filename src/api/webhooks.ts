import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { DEFAULT_DELIVERY_ORDERING } from '../domain/delivery-ordering.js';
import { DEFAULT_SUBSCRIPTION } from '../domain/event-types.js';
import { PREVIOUS_SECRET_SECONDS } from '../domain/webhook-secret.js';
import { DEFAULT_WEBHOOK_SIGNATURE, generateSigningKey, signatureOf } from '../domain/webhook-signature.js';
import { ERRORS } from '../errors/catalogue.js';
import { Pager } from '../http/pager.js';
import { errorResponses } from '../openapi/error-responses.js';
import {
  toChangedWebhookEndpoint,
  toCreatedWebhookEndpoint,
  toRotatedWebhookSecret,
  toWebhookEndpoint,
} from '../representations/webhook-endpoints.js';
import { NEXT_LINK_HEADER, PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import {
  ChangedWebhookEndpoint,
  CreatedWebhookEndpoint,
  NewWebhookEndpoint,
  RotatedWebhookSecret,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookIdParams,
  WebhookPageQuery,
  WebhookSecretRotation,
} from '../schemas/webhook.js';
import type { WebhookEndpointRecord } from '../store/webhook-endpoint-records.js';
import { checkTargetUrl, type TargetPolicy } from '../webhooks/target-policy.js';
import { auditContext } from './audit-context.js';
import { ownerActedFor, ownerSeen, visibleEndpoint } from './owner-access.js';
import type { RouteOptions } from './route-options.js';
import { SCOPE, SECURITY, TAGS, WITH_BODY } from './webhook-operation.js';

export interface WebhookRouteOptions extends RouteOptions {
  /** Where endpoints may point (WEBHOOK_ALLOW_PRIVATE_URLS), and the resolver their host names are checked with. */
  readonly targets: TargetPolicy;
  /** WEBHOOK_ENDPOINTS_PER_OWNER: one more is 409. */
  readonly endpointsPerOwner: number;
}

/** Webhook endpoints: where events are pushed (their deliveries log: webhook-deliveries.ts). */
const routes: FastifyPluginAsyncTypebox<WebhookRouteOptions> = async (
  app,
  { store, clock, cursors, links, targets, endpointsPerOwner },
) => {
  const endpoints = new Pager(cursors.webhooks, links, '/v1/webhooks', app.storeCache);
  const location = (endpoint: WebhookEndpointRecord) => links.to(`/v1/webhooks/${endpoint.id}`);
  const allowTarget = async (url: string) => {
    const refusal = await checkTargetUrl(url, targets);
    if (refusal !== undefined) throw ERRORS.webhookUrlRefused.create(refusal);
  };
  /** Until when a replaced secret keeps signing beside the new one. */
  const overlapEnd = (seconds: number = PREVIOUS_SECRET_SECONDS.default) =>
    new Date(clock().getTime() + seconds * 1000);
  const found = (id: number, endpoint: WebhookEndpointRecord | undefined) => {
    if (endpoint === undefined) throw ERRORS.webhookNotFound.create(id);
    return endpoint;
  };

  app.post(
    '/v1/webhooks',
    {
      config: SCOPE,
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Register a webhook endpoint',
        description:
          'Events of the chosen types recorded from now on are POSTed to `url`, signed per Standard Webhooks ' +
          'with the secret this response shows once (`signature: "hmac"`, the default) or with a private key ' +
          'the service keeps, verified with the `publicKey` shown (`signature: "ed25519"`). The URL must be ' +
          '`https://` and point to public addresses only.',
        tags: TAGS,
        security: SECURITY,
        querystring: NoQuery,
        body: ref(NewWebhookEndpoint),
        response: {
          201: ref(CreatedWebhookEndpoint, {
            description: 'The endpoint, enabled, with its signing secret (shown only here) or its public key.',
            headers: { Location: { type: 'string', description: 'URL of the endpoint.' } },
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'conflict', ...WITH_BODY),
        },
      },
    },
    async (request, reply) => {
      const {
        url,
        events = [...DEFAULT_SUBSCRIPTION],
        description,
        ordering = DEFAULT_DELIVERY_ORDERING,
        signature = DEFAULT_WEBHOOK_SIGNATURE,
        rateLimit = null,
      } = request.body;
      const owner = ownerActedFor(request, request.body.owner);
      await allowTarget(url);
      const record = {
        owner,
        url,
        events,
        description: description ?? null,
        ordering,
        rateLimit,
        ...generateSigningKey(signature),
      };
      const endpoint = await store.webhooks.create(
        { ...record, createdAt: clock() },
        endpointsPerOwner,
        auditContext(request),
      );
      if (endpoint === undefined) throw ERRORS.endpointsPerOwner.create(owner, endpointsPerOwner);
      reply.code(201).header('location', location(endpoint));
      return toCreatedWebhookEndpoint(endpoint);
    },
  );

  app.get(
    '/v1/webhooks',
    {
      config: SCOPE,
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints',
        description: 'Endpoints in ascending `id` order, paged like `GET /pets`; without their secrets.',
        tags: TAGS,
        security: SECURITY,
        querystring: WebhookPageQuery,
        response: {
          200: Type.Array(ref(WebhookEndpoint), { description: 'A page of endpoints.', headers: NEXT_LINK_HEADER }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
        },
      },
    },
    async (request, reply) => {
      const { limit = PAGE_LIMIT_DEFAULT, cursor } = request.query;
      // The owner is a filter of the page (its cache key and its cursor), so no page is shown to another owner.
      const owner =
        request.query.owner === undefined ? ownerSeen(request) : ownerActedFor(request, request.query.owner);
      return endpoints.send(reply, { limit, cursor, filters: { owner } }, (page) =>
        store.webhooks.list({ ...page, owner }).then((records) => records.map(toWebhookEndpoint)),
      );
    },
  );

  app.get(
    '/v1/webhooks/:webhookId',
    {
      config: SCOPE,
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        description: 'The endpoint, without its secret.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: NoQuery,
        response: {
          200: ref(WebhookEndpoint, { description: 'The endpoint.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      return toWebhookEndpoint(await visibleEndpoint(store, request, request.params.webhookId));
    },
  );

  app.patch(
    '/v1/webhooks/:webhookId',
    {
      config: SCOPE,
      schema: {
        operationId: 'changeWebhookEndpoint',
        summary: 'Change a webhook endpoint',
        description:
          'Changes the fields sent. A new `url` is checked as on registration; `enabled: false` stops sending ' +
          'events recorded from then on (`disabledReason: manual`); `enabled: true` clears `disabledReason` and ' +
          'sends at once the deliveries that waited; `description: null` and `rateLimit: null` clear them; a `signature` of the other ' +
          'kind rotates to a new secret of that kind (an `hmac` one is shown in this answer, only here), the ' +
          'one it had signing beside it for a day.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: NoQuery,
        body: ref(WebhookEndpointChange),
        response: {
          200: ref(ChangedWebhookEndpoint, { description: 'The endpoint, changed.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', ...WITH_BODY),
        },
      },
    },
    async (request) => {
      const { webhookId } = request.params;
      const { signature, ...fields } = request.body;
      await visibleEndpoint(store, request, webhookId);
      if (fields.url !== undefined) await allowTarget(fields.url);
      // Made whatever the endpoint's kind; the store applies it only when that differs (a rotation's overlap).
      const signingKey =
        signature === undefined ? undefined : { ...generateSigningKey(signature), previousExpiresAt: overlapEnd() };
      const changed = found(
        webhookId,
        await store.webhooks.update(webhookId, { ...fields, signingKey }, auditContext(request)),
      );
      return toChangedWebhookEndpoint(changed, signingKey?.secret);
    },
  );

  app.post(
    '/v1/webhooks/:webhookId/rotate-secret',
    {
      config: { ...SCOPE, optionalBody: true },
      // No body is the defaults' body.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: "Rotate a webhook endpoint's signing secret",
        description:
          'Gives the endpoint a new secret, shown only in this answer. Until `previousSecretExpiresAt` every ' +
          'delivery carries two signatures in `webhook-signature`, `v1,<new> v1,<previous>`, so a receiver ' +
          'holding either secret verifies it; then only the new one signs. A rotation within that window ' +
          'replaces the older secret: at most two sign at once. A disabled endpoint is rotated too; its ' +
          'deliveries are signed so once it is enabled again.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: NoQuery,
        body: ref(WebhookSecretRotation),
        response: {
          200: ref(RotatedWebhookSecret, { description: 'The new secret (shown only here), and the overlap.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', ...WITH_BODY),
        },
      },
    },
    async (request) => {
      const { webhookId } = request.params;
      const { previousSecretExpiresIn = PREVIOUS_SECRET_SECONDS.default } = request.body;
      const endpoint = await visibleEndpoint(store, request, webhookId);
      const previousExpiresAt = previousSecretExpiresIn === 0 ? null : overlapEnd(previousSecretExpiresIn);
      // Of the endpoint's kind: only a PATCH of `signature` changes that.
      const rotation = { ...generateSigningKey(signatureOf(endpoint.publicKey)), previousExpiresAt };
      return toRotatedWebhookSecret(
        found(webhookId, await store.webhooks.rotateSecret(webhookId, rotation, auditContext(request))),
      );
    },
  );

  app.delete(
    '/v1/webhooks/:webhookId',
    {
      config: SCOPE,
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description: 'Nothing more is sent to it, and its deliveries log is removed with it.',
        tags: TAGS,
        security: SECURITY,
        params: WebhookIdParams,
        querystring: NoQuery,
        response: {
          204: Type.Null({ description: 'Deleted.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const { webhookId } = request.params;
      await visibleEndpoint(store, request, webhookId);
      if (!(await store.webhooks.remove(webhookId, auditContext(request))))
        throw ERRORS.webhookNotFound.create(webhookId);
      return reply.code(204).send(null);
    },
  );
};

export const webhookRoutes = fp(routes, {
  name: 'webhook-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
