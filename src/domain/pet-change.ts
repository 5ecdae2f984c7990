import type { OrderStatus } from './order-status.js';
import type { PetStatus } from './pet-status.js';

/** The fields of a pet a change may set (docs/decisions.md, "Pets you can correct"). */
export interface PetFields {
  readonly name: string;
  readonly categoryId: number;
  readonly status: PetStatus;
}

/**
 * Each field, in the order a change lists them and the store its columns; the compiler asks for every field
 * of PetFields. A field a pet may lack is one that may be null, so that every record of a pet names it and
 * the compiler asks each for it.
 */
export const PET_FIELDS = Object.keys({
  name: true,
  categoryId: true,
  status: true,
} satisfies Record<keyof PetFields, true>) as readonly (keyof PetFields)[];

/** A pet's fields as a create gives them: one that may be null may be left out, and is null then. */
export type NewPetFields = {
  readonly [F in keyof PetFields as null extends PetFields[F] ? never : F]: PetFields[F];
} & { readonly [F in keyof PetFields as null extends PetFields[F] ? F : never]?: PetFields[F] };

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
  for (const field of PET_FIELDS) {
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
