import { isComplete } from '../domain/order-status.js';
import type { Order } from '../schemas/order.js';
import type { Pet } from '../schemas/pet.js';
import type { OrderRecord, PetRecord } from '../store/store.js';

/** The one boundary between what the store keeps and what the API shows, for every resource. */
export function toPet(record: PetRecord): Pet {
  return { id: record.id, name: record.name, categoryId: record.categoryId, status: record.status };
}

export function toOrder(record: OrderRecord): Order {
  return {
    id: record.id,
    petId: record.petId,
    quantity: record.quantity,
    status: record.status,
    createdAt: record.createdAt.toISOString(),
    complete: isComplete(record.status),
  };
}
