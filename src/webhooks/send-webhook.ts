import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { TLSSocket } from 'node:tls';
import { STOPPED_ATTEMPT_ERROR } from '../domain/delivery-status.js';
import { RefusedAddressError, refusedAddress } from './guarded-lookup.js';
import { KEPT_BODY_BYTES, type ResponseBody, responseBody } from './response-body.js';
import type { TargetPolicy } from './target-policy.js';

/** Of a response body, only this much is read: what is kept, and a byte to know it was longer (then closed). */
const BODY_READ_BYTES = KEPT_BODY_BYTES + 1;
/** The longest redirect target or failure reason kept in an attempt's error text. */
const EXCERPT_CHARS = 200;

export interface WebhookRequest {
  readonly url: string;
  /**
   * The headers that sign it, asked for once its connection is ready, just before it is written: what signs
   * it is what is valid when it is sent, however long it waited to connect.
   */
  readonly headers: () => Promise<Readonly<Record<string, string>>>;
  readonly body: string;
}

export interface SendOptions {
  readonly policy: TargetPolicy;
  /** For the whole attempt: resolving, connecting, sending and the answer. */
  readonly timeoutMs: number;
  /** Aborts the attempt (the dispatcher stops): unless it was answered, its result is then `stopped`. */
  readonly signal: AbortSignal;
  /** The keep-alive agent of the endpoint, for its URL (see EndpointAgents). */
  readonly agent: (url: URL) => http.Agent;
}

/** How one attempt went: a 2xx, or a status and/or the reason it failed, in a few words. */
export interface SendResult {
  readonly delivered: boolean;
  readonly responseStatus: number | undefined;
  /** What the answer's body began with; undefined when it was empty, or there was no answer. */
  readonly responseBody: ResponseBody | undefined;
  /** Whole milliseconds from the start of the attempt to its answer (as much of it as is read) or failure. */
  readonly durationMs: number;
  /** Why it failed, in a few words; never the answer's body: this is logged and traced, the body is its owner's. */
  readonly error: string | undefined;
  /** The answer's `Retry-After`, as sent, when it was a 429 or a 503 (the answers it means a wait on). */
  readonly retryAfter: string | undefined;
  /** The dispatcher's stop cut it off before an answer: nothing is known of how the endpoint would answer. */
  readonly stopped: boolean;
}

/** Too Many Requests, Service Unavailable: their `Retry-After` says when to come back (RFC 9110 §10.2.3). */
const WAIT_STATUSES = new Set([429, 503]);

const excerpt = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS);

/** A result before its duration is known (sendWebhook adds it). */
type Unmeasured = Omit<SendResult, 'durationMs'>;

function failure(error: string, responseStatus?: number, body?: ResponseBody): Unmeasured {
  return { delivered: false, responseStatus, responseBody: body, error, retryAfter: undefined, stopped: false };
}

function answered(status: number, headers: http.IncomingHttpHeaders, read: Buffer): Unmeasured {
  const body = responseBody(read);
  if (status >= 200 && status <= 299) {
    return {
      delivered: true,
      responseStatus: status,
      responseBody: body,
      error: undefined,
      retryAfter: undefined,
      stopped: false,
    };
  }
  // Redirects are not followed: the target would escape the checks made on the registered URL.
  if (status >= 300 && status <= 399) {
    return failure(`redirected to ${excerpt(headers.location ?? '(no location)')}`, status, body);
  }
  const failed = failure(`answered ${status}`, status, body);
  const retryAfter = headers['retry-after'];
  return WAIT_STATUSES.has(status) && retryAfter !== undefined ? { ...failed, retryAfter } : failed;
}

/** Why a request got no answer, in a few words (the deliveries log shows it). */
function describe(error: NodeJS.ErrnoException, host: string): string {
  if (error instanceof RefusedAddressError) return error.message;
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `could not resolve ${host}`;
    default:
      return excerpt(error.code === undefined ? error.message : `${error.code}: ${error.message}`);
  }
}

/** Refusals known before connecting: an http:// URL without WEBHOOK_ALLOW_PRIVATE_URLS, an address literal. */
function refusedUrl(url: URL, policy: TargetPolicy): string | undefined {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPrivate)) {
    return `refused scheme ${url.protocol} (only https: unless WEBHOOK_ALLOW_PRIVATE_URLS)`;
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address is connected to without a lookup, so it is checked here.
  return isIP(host) === 0 ? undefined : refusedAddress(host, policy)?.message;
}

/** How a reused connection the peer closed shows: then nothing reached it, and another connection is tried. */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** What one exchange came to: a result, or a reused connection the peer had closed before it answered. */
type Exchange = Unmeasured | 'stale connection';

/**
 * One request over the endpoint's agent. A reused keep-alive connection that fails before any answer was
 * closed by the peer as it was reused (its idle time-out): the caller tries again on another connection.
 */
function exchange(
  url: URL,
  request: WebhookRequest,
  agent: http.Agent,
  abort: AbortSignal,
  failed: (error: NodeJS.ErrnoException) => Unmeasured,
): Promise<Exchange> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    let answeredAtAll = false;
    // `keep`: the whole answer was read, so the connection goes back to the agent for the next attempt.
    const settle = (result: Exchange, keep = false) => {
      if (settled) return;
      settled = true;
      if (!keep) req.destroy();
      resolve(result);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { 'content-length': Buffer.byteLength(request.body) },
        agent,
        signal: abort,
      },
      (response) => {
        answeredAtAll = true;
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let read = 0;
        const done = () => answered(status, response.headers, Buffer.concat(chunks).subarray(0, BODY_READ_BYTES));
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          read += chunk.length;
          if (read >= BODY_READ_BYTES) settle(done());
        });
        // The status decides; a body cut short (by the time-out, or the peer) is kept as far as it came.
        response.on('end', () => settle(done(), true));
        // A 2xx is decided by its status line: its body is read only as far as it came with it (the
        // connection is kept if that was all of it), never waited for, however long it takes to end.
        if (status >= 200 && status <= 299) setImmediate(() => settle(done()));
        response.on('close', () => settle(done()));
        response.on('error', () => settle(done()));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && !answeredAtAll && !abort.aborted;
      settle(stale && STALE_CODES.has(error.code ?? '') ? 'stale connection' : failed(error));
    });
    // Nothing is written before end(): the headers are set once the connection is up (a reused one is).
    const send = () =>
      request.headers().then(
        (headers) => {
          if (settled) return;
          for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
          req.end(request.body);
        },
        (error: unknown) => settle(failed(error as NodeJS.ErrnoException)),
      );
    req.once('socket', (socket) => {
      if (!socket.connecting) void send();
      else socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => void send());
    });
  });
}

/**
 * One attempt: a POST over node:http(s) through the endpoint's keep-alive agent, whose every new connection
 * resolves through the guarded lookup (a reused one goes to an address already checked), with no redirects
 * followed, a time-out for the whole of it, and at most a few KB of the answer read. Never throws: every
 * outcome is a SendResult.
 */
export async function sendWebhook(request: WebhookRequest, options: SendOptions): Promise<SendResult> {
  const url = new URL(request.url);
  const start = performance.now();
  const measured = (result: Unmeasured): SendResult => ({
    ...result,
    durationMs: Math.round(performance.now() - start),
  });
  const refusal = refusedUrl(url, options.policy);
  if (refusal !== undefined) return measured(failure(refusal));
  // One controller per attempt, aborted by its time-out or by the dispatcher's stop, and let go of after.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.timeoutMs);
  const stop = () => abort.abort();
  options.signal.addEventListener('abort', stop, { once: true });
  if (options.signal.aborted) stop();
  const agent = options.agent(url);
  const failed = (error: NodeJS.ErrnoException): Unmeasured => {
    if (options.signal.aborted) return { ...failure(STOPPED_ATTEMPT_ERROR), stopped: true };
    const timedOut = abort.signal.aborted;
    return failure(timedOut ? `no answer within ${options.timeoutMs} ms` : describe(error, url.hostname));
  };
  try {
    for (;;) {
      const result = await exchange(url, request, agent, abort.signal, failed);
      if (result !== 'stale connection') return measured(result);
    }
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', stop);
  }
}
