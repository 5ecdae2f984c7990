import type { DeliveryOrdering } from '../domain/delivery-ordering.js';
import type { DisabledReason } from '../domain/disabled-reason.js';
import type { EventType } from '../domain/event-types.js';
import type { SigningKey } from '../domain/webhook-signature.js';

// The records of webhook endpoints (WebhookStore, store.ts): a leaf beside records.ts, which names them too.

export interface NewWebhookEndpointRecord {
  /** The partner it belongs to; no other owner's key sees it (src/domain/owner.ts). */
  readonly owner: string;
  readonly url: string;
  /** The event types sent to it; at least one, no repeats. */
  readonly events: readonly EventType[];
  readonly description: string | null;
  /** Whether a subject's deliveries wait for its earlier ones (src/domain/delivery-ordering.ts). */
  readonly ordering: DeliveryOrdering;
  /** At most this many attempts started a second (src/domain/start-window.ts); null: no limit. */
  readonly rateLimit: number | null;
  /**
   * Standard Webhooks' `whsec_…`, or an Ed25519 private key `whsk_…` (src/domain/webhook-signature.ts): kept as it
   * is, since the service signs with it.
   */
  readonly secret: string;
  /** The `whpk_…` that verifies an Ed25519 secret's signatures; null for an HMAC secret. */
  readonly publicKey: string | null;
  readonly createdAt: Date;
}

/** The secret a rotation replaced, and until when it still signs beside the new one. */
interface PreviousSecret {
  readonly secret: string;
  readonly expiresAt: Date;
}

/** What an endpoint's attempts are signed with: its secret, and the one before it while that still signs. */
export interface SigningSecrets {
  readonly secret: string;
  /** null when no rotation left one (never rotated, or rotated with no overlap). */
  readonly previousSecret: PreviousSecret | null;
}

/** An endpoint as the store keeps it; the API shows it without its secrets (but in the 201 of its creation). */
export interface WebhookEndpointRecord extends NewWebhookEndpointRecord, SigningSecrets {
  readonly id: number;
  /** Only enabled endpoints get deliveries, and only of events recorded while they are. */
  readonly enabled: boolean;
  /** Why and when it was disabled; null while it is enabled (and when, for one disabled before, unknown). */
  readonly disabledReason: DisabledReason | null;
  readonly disabledAt: Date | null;
  /** No attempt before this time: the receiver asked, with Retry-After; null when it never did. */
  readonly pausedUntil: Date | null;
  /** The public key of the previous secret, kept with it: null when that is an HMAC secret or there is none. */
  readonly previousPublicKey: string | null;
}

/** An endpoint as an event about it keeps it: never a secret, only until when the previous one signs. */
export type WebhookEndpointSnapshot = Omit<WebhookEndpointRecord, 'secret' | 'previousSecret'> & {
  readonly previousSecretExpiresAt: Date | null;
};

/** A new secret for an endpoint; the one it replaces signs too until `previousExpiresAt` (null: not at all). */
export interface SecretRotation extends SigningKey {
  readonly previousExpiresAt: Date | null;
}

/** A page of endpoints, of one owner when `owner` is set. */
export interface EndpointPageQuery {
  readonly limit: number;
  readonly afterId?: number | undefined;
  readonly owner?: string | undefined;
}

/** A partial update: what is absent is kept; `description: null` clears it. */
export interface WebhookEndpointChange {
  readonly url?: string | undefined;
  readonly events?: readonly EventType[] | undefined;
  readonly enabled?: boolean | undefined;
  readonly description?: string | null | undefined;
  readonly ordering?: DeliveryOrdering | undefined;
  /** A secret of another kind of signature: a rotation to it, made only when the endpoint's kind differs. */
  readonly signingKey?: SecretRotation | undefined;
  /** null clears it. */
  readonly rateLimit?: number | null | undefined;
}
