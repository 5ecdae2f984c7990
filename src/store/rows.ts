import type { Pet, PetStatus } from '../schemas/pet.js';
import type { ApiKeyRecord, ApiKeyWithHash } from './store.js';

/** Column lists and row mappings both stores share (their tables have the same columns). */
export const PET_COLUMNS = 'id, name, category_id, status';
export const ORDER_COLUMNS = 'id, pet_id, quantity, status, created_at';
export const KEY_COLUMNS = 'id, name, prefix, hash, scopes, created_at, expires_at, last_used_at, revoked_at';

export interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: PetStatus;
}

export function petFromRow(row: PetRow): Pet {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status };
}

export function withoutHash({ hash: _hash, ...record }: ApiKeyWithHash): ApiKeyRecord {
  return record;
}
