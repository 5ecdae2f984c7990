import { createHash } from 'node:crypto';

/**
 * The audit log (docs/decisions/audit-log.md): who changed what, written by the store in the same
 * transaction as the change. Never a secret, a key or a token: what it records of a thing is what anyone
 * who may see that thing sees (an endpoint as its events show it).
 */

/** Who made a change: an API key, an owner's portal session, the command line, or the service itself. */
export type AuditActor =
  | { readonly kind: 'key'; readonly keyId: number; readonly keyName: string; readonly owner: string }
  /** `keyId`: the key that made the portal link the session was opened with. */
  | { readonly kind: 'portal'; readonly keyId: number; readonly owner: string }
  | { readonly kind: 'cli' }
  | { readonly kind: 'service' };

export const AUDIT_ACTOR_KINDS = ['key', 'portal', 'cli', 'service'] as const satisfies readonly AuditActor['kind'][];

/** What a change's entry is told by whoever asks for the change: the store adds the rest. */
export interface AuditContext {
  readonly actor: AuditActor;
  /** The request the change was made in (X-Request-Id); absent for the command line and the service. */
  readonly requestId?: string | undefined;
}

/** The command line's context: `keys create`, `keys revoke`, `restore`, `restored`. */
export const CLI_AUDIT: AuditContext = { actor: { kind: 'cli' } };
/** The service's own changes: an endpoint disabled for failing or gone, the first key. */
export const SERVICE_AUDIT: AuditContext = { actor: { kind: 'service' } };

export const AUDIT_ACTIONS = [
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.enabled',
  'webhook_endpoint.disabled',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.deleted',
  'portal_link.created',
  'portal_session.opened',
  'api_key.created',
  'api_key.revoked',
  'database.restored',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_TARGET_KINDS = ['webhook_endpoint', 'portal_link', 'api_key', 'database'] as const;
export type AuditTargetKind = (typeof AUDIT_TARGET_KINDS)[number];

/** What was changed: its kind and id, and whose it is (null: the operator's alone, as a restore). */
export interface AuditTarget {
  readonly kind: AuditTargetKind;
  readonly id: string;
  readonly owner: string | null;
}

/** Each changed field's value before and after, as JSON shows it (null: none, as before a creation). */
export type AuditChanges = Readonly<Record<string, { readonly before: unknown; readonly after: unknown }>>;

/** An entry as a change asks for it; the store gives it its id and time. */
export interface NewAuditEntry extends AuditContext {
  readonly action: AuditAction;
  readonly target: AuditTarget;
  readonly changes?: AuditChanges | undefined;
}

/**
 * Fields never recorded, whatever a record passed in holds: a guard behind the rule that only what is shown
 * is diffed (a signing secret, or a private key, is never shown).
 */
const NEVER_RECORDED = new Set(['secret', 'previousSecret', 'privateKey', 'previousPrivateKey', 'hash']);

/** A value as JSON has it (a Date as its ISO text), so that equal values compare equal. */
const asJson = (value: unknown): unknown => (value === undefined ? null : JSON.parse(JSON.stringify(value)));

/**
 * The fields whose JSON differs between `before` and `after` (a field missing on one side is null there), in
 * the order they first appear: generic over the fields, so one added to what an endpoint shows is recorded
 * without a change here. Undefined when nothing changed.
 */
export function changedFields(
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): AuditChanges | undefined {
  const changes: Record<string, { before: unknown; after: unknown }> = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (NEVER_RECORDED.has(field)) continue;
    const was = asJson(before[field]);
    const is = asJson(after[field]);
    if (JSON.stringify(was) !== JSON.stringify(is)) changes[field] = { before: was, after: is };
  }
  return Object.keys(changes).length === 0 ? undefined : changes;
}

/** A change of an endpoint that moved `enabled` is its enabling or its disabling; any other, an update. */
export function endpointChangeAction(changes: AuditChanges): AuditAction {
  const enabled = changes.enabled;
  if (enabled === undefined) return 'webhook_endpoint.updated';
  return enabled.after === true ? 'webhook_endpoint.enabled' : 'webhook_endpoint.disabled';
}

/**
 * A portal link's id in the log: a digest of its nonce, so that the link's creation and the session it
 * opened name the same link, while the log holds nothing of the token itself.
 */
export function portalLinkReference(nonce: string): string {
  return createHash('sha256').update(nonce).digest('base64url').slice(0, 16);
}
