/**
 * The shapes of the portal API's JSON (the same as /v1/webhooks, src/schemas/webhook*.ts), written out here:
 * the page is compiled apart from the service and imports nothing from it. The browser test checks them.
 */

type DisabledReason = 'failing' | 'gone' | 'manual';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
type DeliveryTrigger = 'event' | 'resend' | 'recover' | 'test';
export type DeliveryOrdering = 'subject' | 'none';
export type WebhookSignature = 'hmac' | 'ed25519';

/** How an endpoint's deliveries are signed, and the public keys that verify an Ed25519 one's. */
export interface SignatureKeys {
  readonly signature: WebhookSignature;
  readonly publicKey: string | null;
  readonly previousPublicKey: string | null;
  readonly previousSecretExpiresAt: string | null;
}

export interface Session {
  readonly owner: string;
  readonly expiresAt: string;
}

export interface Endpoint extends SignatureKeys {
  readonly id: number;
  readonly owner: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly description: string | null;
  readonly enabled: boolean;
  readonly ordering: DeliveryOrdering;
  /** Attempts started a second at most; null: no limit. */
  readonly rateLimit: number | null;
  readonly createdAt: string;
  readonly disabledReason: DisabledReason | null;
  readonly disabledAt: string | null;
  readonly pausedUntil: string | null;
}

/** `secret` is absent for an Ed25519 endpoint, and from a change that made no new HMAC secret. */
export interface CreatedEndpoint extends Endpoint {
  readonly secret?: string;
}

export interface NewEndpoint {
  readonly url: string;
  readonly events: readonly string[];
  readonly description?: string;
  readonly ordering: DeliveryOrdering;
  readonly rateLimit?: number;
  readonly signature: WebhookSignature;
}

/** The fields sent are changed; `description: null` and `rateLimit: null` clear them. */
export interface EndpointChange {
  readonly url?: string;
  readonly events?: readonly string[];
  readonly enabled?: boolean;
  readonly description?: string | null;
  readonly ordering?: DeliveryOrdering;
  readonly rateLimit?: number | null;
  /** A change of kind makes a new key; back to HMAC, the answer has the new secret, that once. */
  readonly signature?: WebhookSignature;
}

export interface DeliveryAttempt {
  readonly eventId: string;
  readonly type: string;
  readonly attempt: number;
  readonly status: DeliveryStatus;
  readonly trigger: DeliveryTrigger;
  readonly responseStatus?: number;
  readonly error?: string;
  readonly durationMs?: number;
  readonly responseBody?: string;
  readonly responseBodyTruncated?: true;
  readonly attemptedAt: string;
  readonly nextAttemptAt?: string;
  readonly waitingFor?: string;
}

/** An event, as sent: the page shows it as JSON and reads nothing in it. */
export type EventBody = Readonly<Record<string, unknown>>;

export interface DeliveryFilter {
  readonly status?: DeliveryStatus;
  readonly eventId?: string;
}

export interface RotatedSecret extends SignatureKeys {
  readonly secret?: string;
}

export interface ResendAccepted {
  readonly eventId: string;
  readonly endpointEnabled: boolean;
}

export interface RecoveryAccepted {
  readonly queued: number;
  readonly endpointEnabled: boolean;
}

export interface TestSendAccepted {
  readonly eventId: string;
  readonly endpointEnabled: boolean;
}

/** One page of a list, and the cursor of the next one when there is more. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: string | undefined;
}

/** One entry of the owner's audit log (src/schemas/audit-log.ts): who changed what, and how. */
export interface AuditEntry {
  readonly id: number;
  readonly at: string;
  readonly actor: {
    readonly kind: 'key' | 'portal' | 'cli' | 'service';
    readonly keyId?: number;
    readonly keyName?: string;
    readonly owner?: string;
  };
  readonly action: string;
  readonly target: { readonly kind: string; readonly id: string; readonly owner?: string };
  readonly changes?: Readonly<Record<string, { readonly before: unknown; readonly after: unknown }>>;
  readonly requestId?: string;
}
