import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { allowedMoves } from '../domain/order-status.js';
import { ERRORS } from '../errors/catalogue.js';
import { createdResponse, IdempotencyKeyHeader, REPLAYED, REPLAYED_HEADER } from '../http/idempotency.js';
import { Pager } from '../http/pager.js';
import { errorResponses } from '../openapi/error-responses.js';
import { toOrder } from '../representations/resources.js';
import { ListOrdersQuery, NewOrder, Order, OrderIdParams, OrderStatusChange } from '../schemas/order.js';
import { NEXT_LINK_HEADER, PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import type { OrderRecord } from '../store/records.js';
import type { RouteOptions } from './route-options.js';

const EXTENSION =
  "Extension of the v1 interface's store area, whose details the interface does not show; see docs/decisions.md.";

/** The store area: orders, whose status moves drive the pets' availability. */
const routes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, idempotency, clock, cursors, links }) => {
  const pager = new Pager(cursors.orders, links, '/v1/store/orders', app.storeCache);
  const location = (order: OrderRecord) => links.to(`/v1/store/orders/${order.id}`);

  app.get(
    '/v1/store/orders',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listOrders',
        summary: 'List orders',
        description: `Orders in ascending \`id\` order, paged like \`GET /pets\`. ${EXTENSION}`,
        tags: ['store'],
        querystring: ListOrdersQuery,
        response: {
          200: Type.Array(ref(Order), { description: 'A page of orders.', headers: NEXT_LINK_HEADER }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
        },
      },
    },
    async (request, reply) => {
      const { limit = PAGE_LIMIT_DEFAULT, status, cursor } = request.query;
      return pager.send(reply, { limit, filters: { status }, cursor }, (q) =>
        store.orders.list({ ...q, status }).then((records) => records.map(toOrder)),
      );
    },
  );

  app.post(
    '/v1/store/orders',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'placeOrder',
        summary: 'Place an order for an available animal',
        description: `Reserves the animal: its status moves from \`available\` to \`pending\` atomically. ${EXTENSION}`,
        tags: ['store'],
        querystring: NoQuery,
        headers: IdempotencyKeyHeader,
        body: ref(NewOrder),
        response: {
          201: ref(Order, {
            description: 'The order, `placed`.',
            headers: { Location: { type: 'string', description: 'URL of the order.' }, ...REPLAYED_HEADER },
          }),
          ...errorResponses(
            'invalid_request',
            'unauthorized',
            'forbidden',
            'not_found',
            'conflict',
            'payload_too_large',
            'unsupported_media_type',
            'idempotency_mismatch',
          ),
        },
      },
    },
    async (request, reply) => {
      const { petId, quantity = 1 } = request.body;
      const record = { petId, quantity, createdAt: clock() };
      const result = await idempotency.run(request, reply, {
        body: { petId, quantity },
        plain: () => store.orders.place(record),
        once: (once) => store.orders.placeOnce(record, once),
        render: (order: OrderRecord) => createdResponse(location(order), toOrder(order)),
      });
      if (result === REPLAYED) return reply;
      switch (result.outcome) {
        case 'pet_not_found':
          throw ERRORS.petNotFound.create(petId);
        case 'pet_not_available':
          throw ERRORS.petNotAvailable.create(petId, result.petStatus);
        case 'placed':
          reply.code(201).header('location', location(result.order));
          return toOrder(result.order);
      }
    },
  );

  app.get(
    '/v1/store/orders/:orderId',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getOrder',
        summary: 'Get an order',
        description: EXTENSION,
        tags: ['store'],
        params: OrderIdParams,
        querystring: NoQuery,
        response: {
          200: ref(Order, { description: 'The order.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const { orderId } = request.params;
      const order = orderId >= 1 ? await store.orders.get(orderId) : undefined;
      if (order === undefined) throw ERRORS.orderNotFound.create(orderId);
      return toOrder(order);
    },
  );

  app.patch(
    '/v1/store/orders/:orderId',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'changeOrderStatus',
        summary: 'Move an order to another status',
        description:
          '`placed → approved → delivered` (the animal becomes `sold`), `placed|approved → cancelled` (the animal ' +
          `becomes \`available\`). Any other move is 409, naming the allowed moves. ${EXTENSION}`,
        tags: ['store'],
        params: OrderIdParams,
        querystring: NoQuery,
        body: ref(OrderStatusChange),
        response: {
          200: ref(Order, { description: 'The order, moved.' }),
          ...errorResponses(
            'invalid_request',
            'unauthorized',
            'forbidden',
            'not_found',
            'conflict',
            'payload_too_large',
            'unsupported_media_type',
          ),
        },
      },
    },
    async (request) => {
      const { orderId } = request.params;
      const result =
        orderId >= 1
          ? await store.orders.changeStatus(orderId, request.body.status)
          : { outcome: 'order_not_found' as const };
      switch (result.outcome) {
        case 'order_not_found':
          throw ERRORS.orderNotFound.create(orderId);
        case 'refused':
          throw ERRORS.orderMoveRefused.create(result.from, request.body.status, allowedMoves(result.from));
        case 'changed':
          return toOrder(result.order);
      }
    },
  );
};

export const orderRoutes = fp(routes, {
  name: 'order-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
