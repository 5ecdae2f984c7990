import type { Scope } from '../../domain/api-key.js';
import type { OrderStatus } from '../../domain/order-status.js';
import type { PetStatus } from '../../domain/pet-status.js';
import type { ApiKeyRecord, ApiKeyWithHash, OrderRecord, PetRecord } from '../records.js';

/**
 * The one boundary between table rows and the store's records, for both backends: their tables have the
 * same columns, and differ only in how a timestamp arrives (see ToDate).
 */
export const PET_COLUMNS = 'id, name, category_id, status, version';
export const ORDER_COLUMNS = 'id, pet_id, quantity, status, created_at';
export const KEY_COLUMNS = 'id, name, owner, prefix, hash, scopes, created_at, expires_at, last_used_at, revoked_at';

/** A timestamp column as the driver returns it: SQLite keeps milliseconds, PostgreSQL's driver gives a Date. */
export type ToDate<D> = (value: D) => Date;
export const fromMilliseconds: ToDate<number> = (ms) => new Date(ms);
export const asDate: ToDate<Date> = (date) => date;

export interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: PetStatus;
  version: number;
}

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

export function petFromRow(row: PetRow): PetRecord {
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
