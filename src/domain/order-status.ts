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

export type Move =
  | { readonly allowed: true; readonly petStatus: PetStatus }
  | { readonly allowed: false; readonly reason: string };

/** Whether an order may move from one status to another, and what its pet becomes if so. */
export function move(from: OrderStatus, to: OrderStatus): Move {
  const petStatus = MOVES[from][to];
  if (petStatus !== undefined) return { allowed: true, petStatus };
  const allowed = allowedMoves(from);
  const options = allowed.length === 0 ? `${from} is final` : `from ${from} it can move to: ${allowed.join(', ')}`;
  return { allowed: false, reason: `an order cannot move from ${from} to ${to}; ${options}` };
}

/** An order is complete once delivered. */
export function isComplete(status: OrderStatus): boolean {
  return status === 'delivered';
}
