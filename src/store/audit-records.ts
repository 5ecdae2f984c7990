import type { AuditAction, AuditActor, AuditChanges, AuditTarget, AuditTargetKind } from '../domain/audit.js';

// The audit log's records (AuditLogStore, store.ts): a leaf beside records.ts.

/** One entry as the store keeps it. */
export interface AuditEntryRecord {
  readonly id: number;
  readonly at: Date;
  readonly actor: AuditActor;
  readonly action: AuditAction;
  readonly target: AuditTarget;
  readonly changes: AuditChanges | null;
  readonly requestId: string | null;
}

/** A page of entries, newest first, below `beforeId`; each filter given narrows it. */
export interface AuditQuery {
  readonly limit: number;
  readonly beforeId?: number | undefined;
  /** One owner's entries (those whose target is that owner's); every owner's when absent. */
  readonly owner?: string | undefined;
  readonly action?: AuditAction | undefined;
  readonly target?: { readonly kind: AuditTargetKind; readonly id: string } | undefined;
  /** Entries made at or after it. */
  readonly since?: Date | undefined;
}
