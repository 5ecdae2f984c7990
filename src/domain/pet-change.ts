import type { OrderStatus } from './order-status.js';
import type { PetStatus } from './pet-status.js';

/** The fields of a pet a change may set (docs/decisions.md, "Pets you can correct"). */
export interface PetFields {
  readonly name: string;
  readonly categoryId: number;
  readonly status: PetStatus;
}

/** A JSON Merge Patch of a pet's fields: those given replace the pet's, the others stay. */
export type PetPatch = Partial<PetFields>;

/** The orders that hold their pet: while one does, the pet's status is the order's to move, and it stays. */
export const HOLDING_ORDER_STATUSES: readonly OrderStatus[] = ['placed', 'approved'];

/**
 * What a patch changes: the fields whose value differs from the pet's, with their values after and before.
 * A field sent with the value it has changes nothing, so a patch of such fields alone is no change.
 */
export function petChanges(pet: PetFields, patch: PetPatch): { readonly after: PetPatch; readonly before: PetPatch } {
  const after: Partial<Record<keyof PetFields, unknown>> = {};
  const before: Partial<Record<keyof PetFields, unknown>> = {};
  for (const field of ['name', 'categoryId', 'status'] as const) {
    const value = patch[field];
    if (value === undefined || value === pet[field]) continue;
    after[field] = value;
    before[field] = pet[field];
  }
  return { after: after as PetPatch, before: before as PetPatch };
}

/** Whether a change with this `If-Match` condition (undefined: none) may apply to a pet at `version`. */
export function versionMatches(expected: readonly number[] | undefined, version: number): boolean {
  return expected === undefined || expected.includes(version);
}
