import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../clock.js';
import type { CursorCodec } from '../domain/cursor.js';
import { isComplete } from '../domain/order-status.js';
import { ApiError } from '../http/error-codes.js';
import { type Idempotency, IdempotencyKeyHeader, REPLAYED, REPLAYED_HEADER } from '../http/idempotency.js';
import type { Links } from '../http/links.js';
import { Pager } from '../http/pager.js';
import { errorResponses } from '../http/responses.js';
import { ListOrdersQuery, NewOrder, Order, OrderIdParams, OrderStatusChange } from '../schemas/order.js';
import { NEXT_LINK_HEADER, PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { ref } from '../schemas/ref.js';
import type { OrderRecord, Store, StoredResponse } from '../store/store.js';

export interface OrderRoutesOptions {
  readonly store: Store;
  readonly idempotency: Idempotency;
  readonly clock: Clock;
  readonly cursors: CursorCodec;
  readonly links: Links;
}

function toOrder(record: OrderRecord): Order {
  return {
    id: record.id,
    petId: record.petId,
    quantity: record.quantity,
    status: record.status,
    createdAt: record.createdAt.toISOString(),
    complete: isComplete(record.status),
  };
}

const EXTENSION =
  "Extension of the v1 interface's store area, whose details the interface does not show; see docs/decisions.md.";

/** The store area: orders, whose status moves drive the pets' availability. */
export const orderRoutes: FastifyPluginAsyncTypebox<OrderRoutesOptions> = async (
  app,
  { store, idempotency, clock, cursors, links },
) => {
  const pager = new Pager(cursors, links, '/v1/store/orders');
  const location = (order: OrderRecord) => links.to(`/v1/store/orders/${order.id}`);
  /** The placeOrder response as kept for retries: what the serialiser would send. */
  const placed = (order: OrderRecord): StoredResponse => ({
    status: 201,
    headers: { location: location(order) },
    body: JSON.stringify(toOrder(order)),
  });

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
      return pager.send(reply, { limit, status, cursor }, (q) =>
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
        plain: () => store.orders.place(record),
        once: (once) => store.orders.placeOnce(record, once),
        render: placed,
      });
      if (result === REPLAYED) return reply;
      switch (result.outcome) {
        case 'pet_not_found':
          throw new ApiError('not_found', `pet ${petId} does not exist`);
        case 'pet_not_available':
          throw new ApiError('conflict', `pet ${petId} is ${result.petStatus}, not available`);
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
        response: {
          200: ref(Order, { description: 'The order.' }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const { orderId } = request.params;
      const order = orderId >= 1 ? await store.orders.get(orderId) : undefined;
      if (order === undefined) throw new ApiError('not_found', `order ${orderId} does not exist`);
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
          throw new ApiError('not_found', `order ${orderId} does not exist`);
        case 'refused':
          throw new ApiError('conflict', result.reason);
        case 'changed':
          return toOrder(result.order);
      }
    },
  );
};
