import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../clock.js';
import { ERRORS } from '../errors/catalogue.js';
import type { Once, OnceResult, StoredResponse } from '../store/once-records.js';

/** How long a key is remembered (IETF httpapi idempotency-key draft: 24 h, docs/decisions/idempotency-keys.md). */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_TEXT = /^[\x20-\x7e]{1,255}$/;

/** The request header, for the OpenAPI document of every operation that honours it. */
export const IdempotencyKeyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes a retry safe: the same key with the same body within 24 h answers as the first request did ' +
        '(with `Idempotent-Replayed: true`); with another body, 422. A structured-field string ("…") or a bare ' +
        'token, 1 to 255 printable ASCII characters, scoped to your API key.',
    }),
  ),
});

export const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    type: 'string',
    description: '`true` when this is the stored response of an earlier request.',
  },
};

/** The key from the header, without the quotes of a structured-field string; undefined when absent. */
function idempotencyKey(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  // One structured-field string ("…", with \" and \\ escapes) or one bare token: never a list.
  const text = Array.isArray(header) ? header.join(', ') : header;
  const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(text)?.[1]?.replace(/\\(["\\])/g, '$1');
  const key = quoted ?? (/^[^\s",]+$/.test(text) ? text : '');
  if (!KEY_TEXT.test(key)) {
    throw ERRORS.invalidIdempotencyKey.create();
  }
  return key;
}

/** JSON with object keys sorted, so the same body always digests the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function fingerprint(request: FastifyRequest, body: object): string {
  return createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url}\n${canonical(body)}`)
    .digest('hex');
}

export const REPLAYED = Symbol('replayed');

/**
 * A 201 as kept for retries: the status, `Location` (and any other headers the route sends, such as `ETag`),
 * and the body the route sends, serialised the same way.
 */
export function createdResponse(location: string, body: object, headers: Record<string, string> = {}): StoredResponse {
  return { status: 201, headers: { location, ...headers }, body: JSON.stringify(body) };
}

/**
 * Safe retries of POSTs: the effect runs once per (API key, Idempotency-Key); its response is stored
 * with it, in the same transaction (see Store `…Once` methods), and replayed to retries. A duplicate
 * still in flight in this process gets 409; one in another process waits in the store for the first to
 * commit and gets its replay.
 */
export class Idempotency {
  readonly #clock: Clock;
  readonly #inFlight = new Set<string>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Runs the effect: plainly when the request has no Idempotency-Key, otherwise once per key. Returns
   * its result, or REPLAYED when the stored response of an earlier request was sent instead.
   */
  async run<T, R>(
    request: FastifyRequest,
    reply: FastifyReply,
    effect: {
      /**
       * The body as the route applies it, its defaults filled in: a retry that spells a default out is the
       * same request, and one that changes anything else is not.
       */
      readonly body: object;
      readonly plain: () => Promise<R>;
      readonly once: (once: Once<T>) => Promise<OnceResult<R>>;
      readonly render: (result: T) => StoredResponse;
    },
  ): Promise<R | typeof REPLAYED> {
    const key = idempotencyKey(request);
    if (key === undefined) return effect.plain();
    const owner = request.apiKey?.id;
    if (owner === undefined) throw new Error('idempotency needs an authenticated request');
    const slot = `${owner}:${key}`;
    if (this.#inFlight.has(slot)) throw ERRORS.idempotencyInFlight.create();
    this.#inFlight.add(slot);
    try {
      const now = this.#clock();
      const result = await effect.once({
        owner,
        key,
        fingerprint: fingerprint(request, effect.body),
        now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        render: effect.render,
      });
      switch (result.outcome) {
        case 'done':
          return result.result;
        case 'mismatch':
          throw ERRORS.idempotencyMismatch.create();
        case 'replay':
          reply
            .code(result.response.status)
            .headers(result.response.headers)
            .header('idempotent-replayed', 'true')
            .type('application/json; charset=utf-8')
            .send(result.response.body);
          return REPLAYED;
      }
    } finally {
      this.#inFlight.delete(slot);
    }
  }
}
