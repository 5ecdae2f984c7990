import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type Rate, waits } from '../domain/token-bucket.js';
import type { ApiError } from '../errors/api-error.js';
import { ERRORS } from '../errors/catalogue.js';
import type { Metrics } from '../observability/metrics.js';
import type { FailOpen } from './fail-open.js';
import type { RateLimiter } from './rate-limiter.js';

export interface RateLimitOptions {
  readonly limiter: RateLimiter;
  /** Per API key; none when undefined (RATE_LIMIT_RPS=0). */
  readonly perKey: Rate | undefined;
  /** Failed authentications per client address are limited unless this is false (AUTH_FAILURE_LIMIT=off). */
  readonly failedAuthentication?: boolean;
}

interface PluginOptions {
  /** Off when undefined: the plugins are still registered (others depend on them) but limit nothing. */
  readonly rateLimit: RateLimitOptions | undefined;
  readonly metrics: Metrics;
  /** One policy for both plugins, so an outage warns once a minute, not once per plugin. */
  readonly failOpen: FailOpen;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The answer to a request whose authentication failed: its 401, or 429 once its address failed too often. */
    failedAuthentication(request: FastifyRequest, refusal: ApiError): Promise<ApiError>;
  }
}

/** Failed authentication per client address: 20 tries, then one a second (guessing keys is pointless anyway). */
const AUTH_FAILURE_RATE: Rate = { perSecond: 1, burst: 20 };

/**
 * Failed authentication per client address, judged only when authentication fails (auth calls it): each
 * failure takes a token, and one that finds the bucket empty is answered 429 instead of 401. A request
 * with a valid key never touches the bucket, so failures from a shared address (a proxy, a NAT) cannot
 * lock its valid keys out, and valid requests cost no call to the limiter for it.
 */
export const failedAuthLimit = fp(
  async (app: FastifyInstance, { rateLimit, metrics, failOpen }: PluginOptions) => {
    const limiter = rateLimit?.failedAuthentication === false ? undefined : rateLimit?.limiter;
    app.decorate('failedAuthentication', async (request: FastifyRequest, refusal: ApiError) => {
      if (limiter === undefined) return refusal;
      const decision = await limiter.take(`auth-failures:${request.ip}`, AUTH_FAILURE_RATE, 1);
      if (decision.outcome === 'unknown') failOpen.pass(decision.error);
      if (decision.outcome !== 'refused') return refusal;
      metrics.rateLimited.inc({ reason: 'failed_authentication' });
      return ERRORS.addressOverLimit.create(waits(decision.tokens, AUTH_FAILURE_RATE).retryAfter);
    });
  },
  { name: 'failed-auth-limit', dependencies: ['metrics'] },
);

/**
 * After authentication: a token bucket per API key, and one per owner for its portal sessions (whichever key
 * made their links), with the IETF httpapi RateLimit-Policy and RateLimit headers on every limited response,
 * and 429 `rate_limited` with Retry-After when it is empty.
 */
export const keyRateLimit = fp(
  async (app: FastifyInstance, { rateLimit, metrics, failOpen }: PluginOptions) => {
    const perKey = rateLimit?.perKey;
    if (rateLimit === undefined || perKey === undefined) return;
    const { limiter } = rateLimit;
    const policy = `"default";q=${perKey.burst};w=${Math.ceil(perKey.burst / perKey.perSecond)}`;
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const key = request.apiKey;
      if (key === null) return;
      const bucket = key.portalSession ? `portal:${key.owner}` : `key:${key.id}`;
      const decision = await limiter.take(bucket, perKey, 1);
      // Nothing true can be said in the headers then.
      if (decision.outcome === 'unknown') return failOpen.pass(decision.error);
      const { retryAfter, untilFull } = waits(decision.tokens, perKey);
      reply.headers({
        'ratelimit-policy': policy,
        ratelimit: `"default";r=${Math.floor(decision.tokens)};t=${untilFull}`,
      });
      if (decision.outcome === 'refused') {
        metrics.rateLimited.inc({ reason: key.portalSession ? 'portal_session' : 'api_key' });
        throw (key.portalSession ? ERRORS.portalOverLimit : ERRORS.keyOverLimit).create(retryAfter);
      }
    });
  },
  { name: 'key-rate-limit', dependencies: ['auth', 'metrics'] },
);
