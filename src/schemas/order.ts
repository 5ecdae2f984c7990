import { type Static, Type } from 'typebox';
import { ORDER_STATUSES, type OrderStatus as OrderStatusName } from '../domain/order-status.js';
import { Int64 } from './int64.js';
import { PageCursor, PageLimit } from './page.js';
import { filterParameter } from './query.js';

const ORDER_QUANTITY_MAX = 1000;

export const OrderStatus = Type.Unsafe<OrderStatusName>({
  $id: 'OrderStatus',
  type: 'string',
  enum: [...ORDER_STATUSES],
  description:
    'placed → approved → delivered (the pet becomes sold); placed or approved → cancelled (the pet becomes ' +
    'available again). Any other move is refused with 409.',
});
export type OrderStatus = Static<typeof OrderStatus>;

const Quantity = Type.Integer({ minimum: 1, maximum: ORDER_QUANTITY_MAX });

export const Order = Type.Object(
  {
    id: Int64({ minimum: 1, description: 'Assigned by the service.' }),
    petId: Int64({ minimum: 1, description: 'The animal ordered.' }),
    quantity: Quantity,
    status: Type.Unsafe<OrderStatusName>({ $ref: 'OrderStatus' }),
    createdAt: Type.String({ format: 'date-time', description: 'When the order was placed (UTC).' }),
    complete: Type.Boolean({ description: 'True once the order is delivered.' }),
  },
  { $id: 'Order', additionalProperties: false },
);
export type Order = Static<typeof Order>;

export const NewOrder = Type.Object(
  {
    petId: Int64({ minimum: 1, description: 'The animal to order; it must be `available`.' }),
    // Defaulted by the route, not a `default` keyword, which would make generated clients require it.
    quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: ORDER_QUANTITY_MAX, description: 'Defaults to 1.' })),
  },
  { $id: 'NewOrder', additionalProperties: false, description: 'Places an order; unknown fields are refused.' },
);
export type NewOrder = Static<typeof NewOrder>;

export const OrderStatusChange = Type.Object(
  { status: Type.Unsafe<OrderStatusName>({ $ref: 'OrderStatus' }) },
  { $id: 'OrderStatusChange', additionalProperties: false, description: 'Moves an order to another status.' },
);
export type OrderStatusChange = Static<typeof OrderStatusChange>;

export const ListOrdersQuery = Type.Object(
  {
    limit: PageLimit,
    status: filterParameter(ORDER_STATUSES, 'Only orders with this status.'),
    cursor: PageCursor,
  },
  { additionalProperties: false },
);
export type ListOrdersQuery = Static<typeof ListOrdersQuery>;

export const OrderIdParams = Type.Object({
  orderId: Int64({ description: 'Identifier of the order.' }),
});
