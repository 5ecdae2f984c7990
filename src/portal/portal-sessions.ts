import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { grants, isActive } from '../domain/api-key.js';
import { type AuditContext, type NewAuditEntry, portalLinkReference } from '../domain/audit.js';
import { newNonce, type PortalGrant, readPortalToken, signPortalToken } from '../domain/portal-token.js';
import { ApiError } from '../errors/api-error.js';
import { ERRORS } from '../errors/catalogue.js';
import type { Store } from '../store/store.js';

/** The session cookie: under /portal only, so it is never sent to /v1, where a bearer key is the only way in. */
const SESSION_COOKIE = 'petstore_portal';
export const PORTAL_PATH = '/portal';

/**
 * Who a portal session acts as: a key of its owner with the `webhooks` scope alone, limited and logged as
 * that owner's portal, not as the key that made the link (`id`).
 */
export interface PortalActor {
  readonly id: number;
  readonly name: string;
  readonly owner: string;
  readonly scopes: readonly ['webhooks'];
  readonly portalSession: true;
}

interface SessionOptions {
  readonly store: Store;
  readonly clock: Clock;
  /** Signs links and sessions; shared by every instance on the database (Store.secret). */
  readonly secret: Buffer;
  /** PORTAL_LINK_TTL: how long a link, and the session it opens, lasts. */
  readonly ttlMs: number;
  /** Set the cookie's Secure attribute: under TLS, or behind a proxy that speaks it (an https PUBLIC_URL). */
  readonly secure: boolean;
}

/** The cookie's value from a Cookie header, if it is there (a few lines: it is the only cookie read). */
function cookieValue(header: string | undefined): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}

/** A link's audit entry: the link by a digest of its nonce (never the token), and until when it is valid. */
function linkEntry(
  action: 'portal_link.created' | 'portal_session.opened',
  grant: PortalGrant,
  audit: AuditContext,
): NewAuditEntry {
  const target = { kind: 'portal_link' as const, id: portalLinkReference(grant.nonce), owner: grant.owner };
  const changes = { expiresAt: { before: null, after: grant.expiresAt.toISOString() } };
  return { ...audit, action, target, changes: action === 'portal_link.created' ? changes : undefined };
}

/**
 * Portal links and sessions (docs/portal.md): a key with `webhooks` mints a link for its owner; the page
 * trades the link once for a session cookie lasting as long as the link; every request of the session is
 * checked against the clock and the key that made the link, so revoking that key ends its sessions.
 */
export class PortalSessions {
  readonly #options: SessionOptions;

  constructor(options: SessionOptions) {
    this.#options = options;
  }

  /**
   * A new link for `owner`, made by the key `keyId`; its token goes in the URL fragment. Recorded in the
   * audit log (`portal_link.created`, by `audit`'s actor) before it is handed out.
   */
  async mintLink(keyId: number, owner: string, audit: AuditContext): Promise<{ token: string; expiresAt: Date }> {
    const expiresAt = new Date(this.#options.clock().getTime() + this.#options.ttlMs);
    const nonce = newNonce();
    const token = signPortalToken(this.#options.secret, 'link', { owner, keyId, expiresAt, nonce });
    await this.#options.store.audit.record(linkEntry('portal_link.created', { owner, keyId, expiresAt, nonce }, audit));
    return { token, expiresAt };
  }

  /**
   * Trades a link for a session: the grant and its Set-Cookie header, or the 401 to answer. The session's
   * opening is recorded (`portal_session.opened`) with the link's redemption.
   */
  async trade(token: string, requestId: string): Promise<{ grant: PortalGrant; setCookie: string } | ApiError> {
    const grant = readPortalToken(this.#options.secret, 'link', token);
    if (grant === undefined || !(await this.#valid(grant))) return ERRORS.portalLinkRefused.create();
    const actor = { kind: 'portal' as const, keyId: grant.keyId, owner: grant.owner };
    const opened = linkEntry('portal_session.opened', grant, { actor, requestId });
    if (!(await this.#options.store.apiKeys.redeemLink(grant.nonce, grant.expiresAt, opened))) {
      return ERRORS.portalLinkRefused.create();
    }
    const session = signPortalToken(this.#options.secret, 'session', grant);
    const seconds = Math.max(1, Math.floor((grant.expiresAt.getTime() - this.#options.clock().getTime()) / 1000));
    const secure = this.#options.secure ? '; Secure' : '';
    const setCookie = `${SESSION_COOKIE}=${session}; Path=${PORTAL_PATH}; Max-Age=${seconds}; HttpOnly; SameSite=Strict${secure}`;
    return { grant, setCookie };
  }

  /** The session of a request's cookie, or the 401 to answer. */
  async session(request: FastifyRequest): Promise<PortalGrant | ApiError> {
    const token = cookieValue(request.headers.cookie);
    const grant = token === undefined ? undefined : readPortalToken(this.#options.secret, 'session', token);
    if (grant === undefined || !(await this.#valid(grant))) return ERRORS.portalSessionMissing.create();
    return grant;
  }

  /** The actor a request's session stands for, or the 401 to answer. */
  async authenticate(request: FastifyRequest): Promise<PortalActor | ApiError> {
    const grant = await this.session(request);
    if (grant instanceof ApiError) return grant;
    return { id: grant.keyId, name: 'portal', owner: grant.owner, scopes: ['webhooks'], portalSession: true };
  }

  /** Within its time, and the key that made it still active and of a scope that could make it. */
  async #valid(grant: PortalGrant): Promise<boolean> {
    const now = this.#options.clock();
    if (grant.expiresAt <= now) return false;
    const key = await this.#options.store.apiKeys.findById(grant.keyId);
    return key !== undefined && isActive(key, now) && grants(key.scopes, 'webhooks');
  }
}
