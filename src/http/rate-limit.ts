import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type Rate, waits } from '../domain/token-bucket.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { needsKey } from './auth.js';
import { ApiError } from './error-codes.js';
import type { Metrics } from './metrics.js';

export interface RateLimitOptions {
  readonly limiter: RateLimiter;
  /** Per API key. */
  readonly perKey: Rate;
}

type WithMetrics = RateLimitOptions & { readonly metrics: Metrics };

/** Failed authentication per client address: 20 tries, then one a second (guessing keys is pointless anyway). */
export const AUTH_FAILURE_RATE: Rate = { perSecond: 1, burst: 20 };

function limited(what: string, tokens: number, rate: Rate, headers: Record<string, string> = {}): ApiError {
  const retryAfter = waits(tokens, rate).retryAfter;
  return new ApiError('rate_limited', `${what}; retry after ${retryAfter} s`, {
    headers: { ...headers, 'retry-after': String(retryAfter) },
  });
}

/**
 * Before authentication: a client address that failed authentication too often is refused (429) until
 * its bucket refills; every 401 takes a token from it.
 */
export const failedAuthLimitPlugin = fp(
  async (app: FastifyInstance, { limiter, metrics }: WithMetrics) => {
    app.addHook('onRequest', async (request: FastifyRequest) => {
      if (!needsKey(request)) return;
      const { tokens } = await limiter.take(`auth-failures:${request.ip}`, AUTH_FAILURE_RATE, 0);
      if (Number.isNaN(tokens)) metrics.rateLimitFailOpen.inc();
      if (tokens < 1) {
        metrics.rateLimited.inc({ reason: 'failed_authentication' });
        throw limited('too many failed authentications from this address', tokens, AUTH_FAILURE_RATE);
      }
    });
    // Async (not a callback) although it waits only on 401s: Fastify then handles whatever the hooks after
    // it throw, which a callback called from a promise would leave unhandled.
    app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (reply.statusCode === 401) await limiter.take(`auth-failures:${request.ip}`, AUTH_FAILURE_RATE, 1);
      return payload;
    });
  },
  { name: 'failed-auth-limit' },
);

/**
 * After authentication: a token bucket per API key, with the IETF httpapi RateLimit-Policy and RateLimit
 * headers on every limited response, and 429 `rate_limited` with Retry-After when it is empty.
 */
export const keyRateLimitPlugin = fp(
  async (app: FastifyInstance, { limiter, perKey, metrics }: WithMetrics) => {
    const policy = `"default";q=${perKey.burst};w=${Math.ceil(perKey.burst / perKey.perSecond)}`;
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const key = request.apiKey;
      if (key === null) return;
      const { allowed, tokens } = await limiter.take(`key:${key.id}`, perKey, 1);
      // NaN: the shared limiter is unreachable and let the request through; there is nothing true to say.
      if (Number.isNaN(tokens)) {
        metrics.rateLimitFailOpen.inc();
        return;
      }
      const headers = {
        'ratelimit-policy': policy,
        ratelimit: `"default";r=${Math.floor(tokens)};t=${waits(tokens, perKey).untilFull}`,
      };
      reply.headers(headers);
      if (!allowed) {
        metrics.rateLimited.inc({ reason: 'api_key' });
        throw limited('this API key is over its rate limit', tokens, perKey, headers);
      }
    });
  },
  { name: 'key-rate-limit', dependencies: ['auth'] },
);
