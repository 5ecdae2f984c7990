import type { PetStatus } from './pet-status.js';

export const ORDER_STATUSES = ['placed', 'approved', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/**
 * The order state machine, and the pet status each move leaves behind. Placing an order moves its pet
 * from `available` to `pending`; these are the moves after that.
 */
const MOVES: Readonly<Record<OrderStatus, Partial<Record<OrderStatus, PetStatus>>>> = {
  placed: { approved: 'pending', cancelled: 'available' },
  approved: { delivered: 'sold', cancelled: 'available' },
  delivered: {},
  cancelled: {},
};

/** The pet status an order placement requires, and the one it leaves. */
export const PLACEABLE_PET_STATUS: PetStatus = 'available';
export const PLACED_PET_STATUS: PetStatus = 'pending';

export function allowedMoves(from: OrderStatus): OrderStatus[] {
  return Object.keys(MOVES[from]) as OrderStatus[];
}

export type Move = { readonly allowed: true; readonly petStatus: PetStatus } | { readonly allowed: false };

/** Whether an order may move from one status to another, and what its pet becomes if so. */
export function move(from: OrderStatus, to: OrderStatus): Move {
  const petStatus = MOVES[from][to];
  return petStatus === undefined ? { allowed: false } : { allowed: true, petStatus };
}

/** An order is complete once delivered. */
export function isComplete(status: OrderStatus): boolean {
  return status === 'delivered';
}
