import type { Clock } from '../clock.js';
import { displayPrefix, generateApiKey, hashApiKey, SCOPES, type Scope } from '../domain/api-key.js';
import type { ApiKeyRecord } from '../store/records.js';
import type { Store } from '../store/store.js';

export interface IssueKeyRequest {
  readonly name: string;
  readonly scopes?: readonly Scope[];
  readonly expiresAt?: Date | null;
}

export interface IssuedKey {
  /** The secret, to be shown once: only its hash is stored. */
  readonly key: string;
  readonly record: ApiKeyRecord;
}

export const KEY_NAME_RULE = /^(?!\d+$)[A-Za-z0-9._-]{1,64}$/;
export const KEY_NAME_PROBLEM = 'a key name is 1 to 64 of A-Z a-z 0-9 . _ - and not only digits';

function newKeyRecord(request: IssueKeyRequest, clock: Clock) {
  if (!KEY_NAME_RULE.test(request.name)) {
    throw new Error(KEY_NAME_PROBLEM);
  }
  const now = clock();
  if (request.expiresAt != null && request.expiresAt <= now) throw new Error('the expiry date must be in the future');
  const key = generateApiKey();
  return {
    key,
    record: {
      name: request.name,
      prefix: displayPrefix(key),
      hash: hashApiKey(key),
      scopes: request.scopes ?? SCOPES,
      expiresAt: request.expiresAt ?? null,
      createdAt: now,
    },
  };
}

export async function issueApiKey(store: Store, clock: Clock, request: IssueKeyRequest): Promise<IssuedKey> {
  const { key, record } = newKeyRecord(request, clock);
  return { key, record: await store.apiKeys.create(record) };
}

/** On a store with no keys at all, issues one with every scope; undefined when any key exists. */
export async function issueFirstApiKey(store: Store, clock: Clock): Promise<IssuedKey | undefined> {
  const { key, record } = newKeyRecord({ name: 'first-key' }, clock);
  const created = await store.apiKeys.createFirst(record);
  return created === undefined ? undefined : { key, record: created };
}
