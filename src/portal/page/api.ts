import type {
  AuditEntry,
  CreatedEndpoint,
  DeliveryAttempt,
  DeliveryFilter,
  Endpoint,
  EndpointChange,
  EventBody,
  NewEndpoint,
  Page,
  RecoveryAccepted,
  ResendAccepted,
  RotatedSecret,
  Session,
  TestSendAccepted,
} from './api-types.js';

/**
 * The portal API (/portal/session, /portal/v1/webhooks…): the session cookie goes with every call, same
 * origin only; no key, no token in any URL.
 */

const ENDPOINTS = '/portal/v1/webhooks';

/** A refusal, with the service's own message (every error body is `{code, message, status}`). */
export class ServiceError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ServiceError';
    this.status = status;
    this.code = code;
  }

  /** 401: the link was expired or used, its key revoked, or the session is over. A new link is needed. */
  get sessionEnded(): boolean {
    return this.status === 401;
  }
}

function isErrorBody(body: unknown): body is { code: string; message: string } {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message } = body as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string';
}

async function refusal(response: Response): Promise<ServiceError> {
  const body: unknown = await response.json().catch(() => undefined);
  if (isErrorBody(body)) return new ServiceError(response.status, body.code, body.message);
  return new ServiceError(response.status, 'unexplained', `The service answered ${response.status} without a reason.`);
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  } catch {
    throw new ServiceError(0, 'unreachable', 'The service could not be reached: check the connection and try again.');
  }
  if (!response.ok) throw await refusal(response);
  return response;
}

async function json<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await (await call(method, path, body)).json()) as T;
}

function withQuery(path: string, query: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(name, String(value));
  }
  const search = params.toString();
  return search === '' ? path : `${path}?${search}`;
}

/**
 * The cursor of the `Link: <…>; rel="next"` header, if there is one. Only the cursor is taken: the link's
 * path is the service's /v1 one, which the session cookie does not open; the caller asks its own path.
 */
function nextCursor(header: string | null): string | undefined {
  for (const [, target, params] of (header ?? '').matchAll(/<([^>]*)>([^,]*)/g)) {
    if (target !== undefined && /;\s*rel="?next"?(?:[\s;]|$)/i.test(params ?? '')) {
      return new URL(target, location.origin).searchParams.get('cursor') ?? undefined;
    }
  }
  return undefined;
}

async function page<T>(path: string, query: Readonly<Record<string, string | number | undefined>>): Promise<Page<T>> {
  const response = await call('GET', withQuery(path, query));
  return { items: (await response.json()) as T[], next: nextCursor(response.headers.get('link')) };
}

/** Trades a link's token (in the body, never a URL) for the session cookie; a link works once. */
export const startSession = (token: string) => json<Session>('POST', '/portal/session', { token });

export const currentSession = () => json<Session>('GET', '/portal/session');

export const listEndpoints = (limit: number, cursor?: string) => page<Endpoint>(ENDPOINTS, { limit, cursor });

export const getEndpoint = (id: number) => json<Endpoint>('GET', `${ENDPOINTS}/${id}`);

export const createEndpoint = (endpoint: NewEndpoint) => json<CreatedEndpoint>('POST', ENDPOINTS, endpoint);

export const changeEndpoint = (id: number, change: EndpointChange) =>
  json<CreatedEndpoint>('PATCH', `${ENDPOINTS}/${id}`, change);

export async function deleteEndpoint(id: number): Promise<void> {
  await call('DELETE', `${ENDPOINTS}/${id}`);
}

/** One endpoint's delivery attempts, newest first. */
export const listDeliveries = (id: number, filter: DeliveryFilter, limit: number, cursor?: string) =>
  page<DeliveryAttempt>(`${ENDPOINTS}/${id}/deliveries`, {
    limit,
    status: filter.status,
    eventId: filter.eventId,
    cursor,
  });

/** An event as the feed and its webhook body show it; 404 for a test send's (never on the feed). */
export const getEvent = (eventId: string) => json<EventBody>('GET', `/portal/v1/events/${encodeURIComponent(eventId)}`);

export const resend = (id: number, eventId: string) =>
  json<ResendAccepted>('POST', `${ENDPOINTS}/${id}/resend`, { eventId });

export const recover = (id: number, since: string) =>
  json<RecoveryAccepted>('POST', `${ENDPOINTS}/${id}/recover`, { since });

export const testSend = (id: number) => json<TestSendAccepted>('POST', `${ENDPOINTS}/${id}/test`);

export const rotateSecret = (id: number) => json<RotatedSecret>('POST', `${ENDPOINTS}/${id}/rotate-secret`);

/** The owner's audit log, newest first. */
export const listAuditLog = (limit: number, cursor?: string) =>
  page<AuditEntry>('/portal/v1/audit-log', { limit, cursor });
