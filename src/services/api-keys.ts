import type { Clock } from '../clock.js';
import { DEFAULT_SCOPES, displayPrefix, generateApiKey, hashApiKey, SCOPES, type Scope } from '../domain/api-key.js';
import { CLI_AUDIT, SERVICE_AUDIT } from '../domain/audit.js';
import { DEFAULT_OWNER, isOwner, OWNER_PROBLEM, ownerFromKeyName } from '../domain/owner.js';
import type { ApiKeyRecord } from '../store/records.js';
import type { Store } from '../store/store.js';

export interface IssueKeyRequest {
  readonly name: string;
  /** Whose endpoints it manages; by default its name, lower-cased (which must then fit the owner rule). */
  readonly owner?: string | undefined;
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
  const owner = request.owner ?? ownerFromKeyName(request.name);
  if (owner === undefined)
    throw new Error(`the key name "${request.name}" is no owner name: ${OWNER_PROBLEM}; name one`);
  if (!isOwner(owner)) throw new Error(OWNER_PROBLEM);
  const now = clock();
  if (request.expiresAt != null && request.expiresAt <= now) throw new Error('the expiry date must be in the future');
  const key = generateApiKey();
  return {
    key,
    record: {
      name: request.name,
      owner,
      prefix: displayPrefix(key),
      hash: hashApiKey(key),
      scopes: request.scopes ?? DEFAULT_SCOPES,
      expiresAt: request.expiresAt ?? null,
      createdAt: now,
    },
  };
}

/** Issues a key: by the operator's command line, as its audit entry says. */
export async function issueApiKey(store: Store, clock: Clock, request: IssueKeyRequest): Promise<IssuedKey> {
  const { key, record } = newKeyRecord(request, clock);
  return { key, record: await store.apiKeys.create(record, CLI_AUDIT) };
}

/**
 * On a store with no keys at all, issues one with every scope, `admin` too (the operator's), of the default
 * owner, by the service itself; undefined when any key exists.
 */
export async function issueFirstApiKey(store: Store, clock: Clock): Promise<IssuedKey | undefined> {
  const { key, record } = newKeyRecord({ name: 'first-key', owner: DEFAULT_OWNER, scopes: SCOPES }, clock);
  const created = await store.apiKeys.createFirst(record, SERVICE_AUDIT);
  return created === undefined ? undefined : { key, record: created };
}
