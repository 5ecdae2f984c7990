import { type Static, type TSchema, Type } from 'typebox';
import type { PetFields } from '../domain/pet-change.js';
import { NAME_MAX_CHARS } from '../domain/pet-name.js';
import { PET_STATUSES } from '../domain/pet-status.js';
import { Int64, MAX_JSON_INTEGER } from './int64.js';
import { PATTERN_MESSAGE } from './keywords.js';
import { PageCursor, PageLimit } from './page.js';
import { filterParameter } from './query.js';

export const PetStatus = Type.Unsafe<(typeof PET_STATUSES)[number]>({
  $id: 'PetStatus',
  type: 'string',
  enum: [...PET_STATUSES],
  description: 'Availability of the animal.',
});
export type PetStatus = Static<typeof PetStatus>;

const NAME_DESCRIPTION =
  `The animal's name: 1 to ${NAME_MAX_CHARS} Unicode characters once leading and trailing ` +
  'white space is trimmed, at least one of them visible; no control characters and no bidirectional ' +
  'formatting characters; stored as sent.';

const PetName = Type.String({
  minLength: 1,
  // Control characters, lone surrogates (which no database stores faithfully) and the bidirectional
  // controls (U+202E shows "\u202Egnp.exe" as "exe.png") are refused.
  pattern: '^[^\\p{Cc}\\p{Cs}\\p{Bidi_Control}]*$',
  [PATTERN_MESSAGE]: 'must not contain control characters, unpaired surrogates or bidirectional formatting characters',
  description: NAME_DESCRIPTION,
});

const CategoryId = Int64({
  minimum: 1,
  description: `Identifier of the category the animal belongs to: 1 to ${MAX_JSON_INTEGER}.`,
});

/** What each schema of a pet's fields below satisfies: the compiler asks it for every field of PetFields. */
type EachField = Record<keyof PetFields, TSchema>;

export const Pet = Type.Object(
  {
    id: Int64({ minimum: 1, description: 'Assigned by the service on creation.' }),
    name: Type.String({ description: "The animal's name." }),
    categoryId: CategoryId,
    status: Type.Unsafe<PetStatus>({ $ref: 'PetStatus' }),
  } satisfies { id: TSchema } & EachField,
  { $id: 'Pet', additionalProperties: false },
);
export type Pet = Static<typeof Pet>;

/** The pet the document's examples show. */
export const EXAMPLE_PET: Pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };

export const NewPet = Type.Object(
  {
    name: PetName,
    categoryId: CategoryId,
    // No `default` keyword: generated clients (openapi-typescript) would then require the field. The
    // route applies the default; allOf, not a bare $ref, because the generator drops keywords beside a $ref.
    status: Type.Optional(
      Type.Unsafe<PetStatus>({ allOf: [{ $ref: 'PetStatus' }], description: 'Defaults to `available`.' }),
    ),
  } satisfies EachField,
  {
    $id: 'NewPet',
    additionalProperties: false,
    description: 'Sent on creation. `id` is assigned by the service; unknown fields are refused.',
  },
);
export type NewPet = Static<typeof NewPet>;

export const PetChange = Type.Object(
  {
    name: Type.Optional(PetName),
    categoryId: Type.Optional(CategoryId),
    status: Type.Optional(
      Type.Unsafe<PetStatus>({
        allOf: [{ $ref: 'PetStatus' }],
        description: 'Changes only while no order holds the animal (`placed` or `approved`).',
      }),
    ),
  } satisfies EachField,
  {
    $id: 'PetChange',
    additionalProperties: false,
    description:
      'A JSON Merge Patch (RFC 7396) of the animal: the fields sent replace its own, those left out stay; each ' +
      'is checked as on creation, and none may be `null`. `id` and unknown fields are refused. `status` may ' +
      'change only while no order holds the animal (`placed` or `approved`). An empty object changes nothing.',
  },
);
export type PetChange = Static<typeof PetChange>;

/** A `pet.updated` event's `previous`: the fields a change set, each as it was. */
export const PetFieldsBefore = Type.Object(
  {
    name: Type.Optional(Type.String()),
    categoryId: Type.Optional(Int64({ minimum: 1 })),
    status: Type.Optional(Type.Unsafe<PetStatus>({ $ref: 'PetStatus' })),
  } satisfies EachField,
  { additionalProperties: false, description: 'The changed fields, with their values before the change.' },
);

export const ListPetsQuery = Type.Object(
  {
    limit: PageLimit,
    status: filterParameter(PET_STATUSES, 'Only animals with this status.'),
    cursor: PageCursor,
  },
  { additionalProperties: false },
);
export type ListPetsQuery = Static<typeof ListPetsQuery>;

export const PetIdParams = Type.Object({
  petId: Int64({ description: 'Identifier of the animal.' }),
});
export type PetIdParams = Static<typeof PetIdParams>;
