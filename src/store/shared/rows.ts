import type { Scope } from '../../domain/api-key.js';
import type { OrderStatus } from '../../domain/order-status.js';
import { type NewPetFields, PET_FIELDS, type PetFields } from '../../domain/pet-change.js';
import type { ApiKeyRecord, ApiKeyWithHash, EventPetRecord, OrderRecord, PetRecord } from '../records.js';

/**
 * The one boundary between table rows and the store's records, for both backends: their tables have the
 * same columns, and differ only in how a timestamp arrives (see ToDate).
 */
export const ORDER_COLUMNS = 'id, pet_id, quantity, status, created_at';
export const KEY_COLUMNS = 'id, name, owner, prefix, hash, scopes, created_at, expires_at, last_used_at, revoked_at';

/**
 * Each field of a pet and its column, the one list of them every statement of both backends is written from
 * (in PET_FIELDS' order): the columns read and returned, inserts and changes. The compiler asks for every
 * field of PetFields; a new one needs a migration on each backend too. `cast`: the PostgreSQL type its
 * parameters are cast to.
 */
const PET_FIELD_COLUMNS = {
  name: { column: 'name', cast: 'text' },
  categoryId: { column: 'category_id', cast: 'bigint' },
  status: { column: 'status', cast: 'text' },
} as const satisfies Record<keyof PetFields, { readonly column: string; readonly cast: string }>;

type PetFieldColumns = typeof PET_FIELD_COLUMNS;
export const petColumn = (field: keyof PetFields): string => PET_FIELD_COLUMNS[field].column;
/** The fields' columns, in order: what an insert names. */
export const PET_FIELD_LIST = PET_FIELDS.map(petColumn).join(', ');
const PET_COLUMN_NAMES = ['id', ...PET_FIELDS.map(petColumn), 'version'];
export const PET_COLUMNS = PET_COLUMN_NAMES.join(', ');
/** PET_COLUMNS, each named with the table: for a statement that also reads a table with columns of those names. */
export const QUALIFIED_PET_COLUMNS = PET_COLUMN_NAMES.map((column) => `pets.${column}`).join(', ');
/** PostgreSQL's parameters of the fields, cast: `$1::text, $2::bigint, …` (of arrays, with `[]`: `$1::text[], …`). */
export const petParameters = (array: '' | '[]' = '') =>
  PET_FIELDS.map((field, i) => `$${i + 1}::${PET_FIELD_COLUMNS[field].cast}${array}`).join(', ');
/** The value of a pet's field as its column keeps it: null for one left out. */
export const petValue = (pet: NewPetFields, field: keyof PetFields): unknown => pet[field] ?? null;
/** The values of a pet's fields, in the columns' order: an insert's or a change's parameters. */
export const petValues = (pet: NewPetFields): unknown[] => PET_FIELDS.map((field) => petValue(pet, field));

/** A timestamp column as the driver returns it: SQLite keeps milliseconds, PostgreSQL's driver gives a Date. */
export type ToDate<D> = (value: D) => Date;
export const fromMilliseconds: ToDate<number> = (ms) => new Date(ms);
export const asDate: ToDate<Date> = (date) => date;

/** A pet's row: its id, its fields in their columns, its version. */
export type PetRow = { id: number; version: number } & {
  -readonly [F in keyof PetFields as PetFieldColumns[F]['column']]: PetFields[F];
};
/** A pet's row in event data, without `version` in events recorded before pets had versions. */
export type EventPetRow = Omit<PetRow, 'version'> & { version?: number };

export interface OrderRow<D> {
  id: number;
  pet_id: number;
  quantity: number;
  status: OrderStatus;
  created_at: D;
}

export interface ApiKeyRow<D> {
  id: number;
  name: string;
  owner: string;
  prefix: string;
  hash: string;
  scopes: string;
  created_at: D;
  expires_at: D | null;
  last_used_at: D | null;
  revoked_at: D | null;
}

export function petFromRow(row: PetRow): PetRecord;
export function petFromRow(row: EventPetRow): EventPetRecord;
export function petFromRow(row: EventPetRow): EventPetRecord {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status, version: row.version };
}

export function orderFromRow<D>(row: OrderRow<D>, toDate: ToDate<D>): OrderRecord {
  return {
    id: row.id,
    petId: row.pet_id,
    quantity: row.quantity,
    status: row.status,
    createdAt: toDate(row.created_at),
  };
}

export function keyFromRow<D>(row: ApiKeyRow<D>, toDate: ToDate<D>): ApiKeyWithHash {
  const orNull = (value: D | null) => (value === null ? null : toDate(value));
  return {
    id: row.id,
    name: row.name,
    owner: row.owner,
    prefix: row.prefix,
    hash: row.hash,
    scopes: row.scopes.split(',') as Scope[],
    createdAt: toDate(row.created_at),
    expiresAt: orNull(row.expires_at),
    lastUsedAt: orNull(row.last_used_at),
    revokedAt: orNull(row.revoked_at),
  };
}

export function withoutHash({ hash: _hash, ...record }: ApiKeyWithHash): ApiKeyRecord {
  return record;
}
