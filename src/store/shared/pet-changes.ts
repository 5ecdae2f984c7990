import type { OrderStatus } from '../../domain/order-status.js';
import {
  HOLDING_ORDER_STATUSES,
  PET_FIELDS,
  type PetPatch,
  petChanges,
  versionMatches,
} from '../../domain/pet-change.js';
import type { PetChangeRefusal, PetRecord } from '../records.js';
import { PET_COLUMNS, petColumn, petValues } from './rows.js';
import type { Param } from './sql-params.js';

/** The order that holds a pet, if one does. */
export interface HoldingOrderRow {
  id: number;
  status: OrderStatus;
}

const HOLDING = HOLDING_ORDER_STATUSES.map((status) => `'${status}'`).join(', ');

/**
 * The statements of a pet's change and removal, alike on both backends: the oldest order holding the pet
 * (orders_pet_id serves it, reading that pet's orders only), the change (every field, the unchanged ones as
 * they were) and the removal, each returning the pet's row.
 */
export function petChangeQueries(param: Param) {
  const set = PET_FIELDS.map((field, i) => `${petColumn(field)} = ${param(i + 1)}`).join(', ');
  return {
    holder: `SELECT id, status FROM orders WHERE pet_id = ${param(1)} AND status IN (${HOLDING}) ORDER BY id LIMIT 1`,
    update: `UPDATE pets SET ${set}, version = version + 1
      WHERE id = ${param(PET_FIELDS.length + 1)} RETURNING ${PET_COLUMNS}`,
    remove: `DELETE FROM pets WHERE id = ${param(1)} RETURNING ${PET_COLUMNS}`,
  };
}

/** What a change of the pet (undefined: none with that id) decides before asking whether an order holds it. */
export type PetChangePlan =
  | { readonly outcome: 'refused'; readonly refusal: PetChangeRefusal }
  /** `after`: the changed fields' values after the change; `before`: their values before. */
  | { readonly outcome: 'change'; readonly pet: PetRecord; readonly after: PetPatch; readonly before: PetPatch };

export function planPetChange(
  current: PetRecord | undefined,
  expected: readonly number[] | undefined,
  patch: PetPatch,
): PetChangePlan {
  if (current === undefined) return { outcome: 'refused', refusal: { outcome: 'pet_not_found' } };
  if (!versionMatches(expected, current.version)) {
    return { outcome: 'refused', refusal: { outcome: 'version_mismatch', version: current.version } };
  }
  return { outcome: 'change', pet: current, ...petChanges(current, patch) };
}

/** The refusal when an order holds the pet. */
export function heldBy(order: HoldingOrderRow): PetChangeRefusal {
  return { outcome: 'held', order: { id: order.id, status: order.status } };
}

/** The values of the change statement's parameters: the pet's fields after the patch, and its id. */
export function updateValues(pet: PetRecord, after: PetPatch): unknown[] {
  return [...petValues({ ...pet, ...after }), pet.id];
}

/** What a `pet.updated` event keeps besides the pet: the changed fields' earlier values, as JSON. */
export const previousText = (before: PetPatch) => JSON.stringify(before);
