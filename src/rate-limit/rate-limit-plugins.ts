import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type Rate, waits } from '../domain/token-bucket.js';
import { ERRORS } from '../errors/catalogue.js';
import type { Metrics } from '../observability/metrics.js';
import { needsKey } from '../plugins/auth.js';
import type { FailOpen } from './fail-open.js';
import type { RateLimiter } from './rate-limiter.js';

export interface RateLimitOptions {
  readonly limiter: RateLimiter;
  /** Per API key. */
  readonly perKey: Rate;
}

interface PluginOptions {
  /** Off when undefined: the plugin is registered (others depend on its place) but adds nothing. */
  readonly rateLimit: RateLimitOptions | undefined;
  readonly metrics: Metrics;
  /** One policy for both plugins, so an outage warns once a minute, not once per plugin. */
  readonly failOpen: FailOpen;
}

/** Failed authentication per client address: 20 tries, then one a second (guessing keys is pointless anyway). */
export const AUTH_FAILURE_RATE: Rate = { perSecond: 1, burst: 20 };

/**
 * Before authentication: a client address that failed authentication too often is refused (429) until
 * its bucket refills; every 401 takes a token from it.
 */
export const failedAuthLimit = fp(
  async (app: FastifyInstance, { rateLimit, metrics, failOpen }: PluginOptions) => {
    if (rateLimit === undefined) return;
    const { limiter } = rateLimit;
    app.addHook('onRequest', async (request: FastifyRequest) => {
      if (!needsKey(request)) return;
      const decision = await limiter.take(`auth-failures:${request.ip}`, AUTH_FAILURE_RATE, 0);
      if (decision.outcome === 'unknown') return failOpen.pass(decision.error);
      if (decision.tokens < 1) {
        metrics.rateLimited.inc({ reason: 'failed_authentication' });
        throw ERRORS.addressOverLimit.create(waits(decision.tokens, AUTH_FAILURE_RATE).retryAfter);
      }
    });
    // Async (not a callback) although it waits only on 401s: Fastify then handles whatever the hooks after
    // it throw, which a callback called from a promise would leave unhandled.
    app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (reply.statusCode === 401) await limiter.take(`auth-failures:${request.ip}`, AUTH_FAILURE_RATE, 1);
      return payload;
    });
  },
  { name: 'failed-auth-limit', dependencies: ['metrics'] },
);

/**
 * After authentication: a token bucket per API key, with the IETF httpapi RateLimit-Policy and RateLimit
 * headers on every limited response, and 429 `rate_limited` with Retry-After when it is empty.
 */
export const keyRateLimit = fp(
  async (app: FastifyInstance, { rateLimit, metrics, failOpen }: PluginOptions) => {
    if (rateLimit === undefined) return;
    const { limiter, perKey } = rateLimit;
    const policy = `"default";q=${perKey.burst};w=${Math.ceil(perKey.burst / perKey.perSecond)}`;
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const key = request.apiKey;
      if (key === null) return;
      const decision = await limiter.take(`key:${key.id}`, perKey, 1);
      // Nothing true can be said in the headers then.
      if (decision.outcome === 'unknown') return failOpen.pass(decision.error);
      const { retryAfter, untilFull } = waits(decision.tokens, perKey);
      reply.headers({
        'ratelimit-policy': policy,
        ratelimit: `"default";r=${Math.floor(decision.tokens)};t=${untilFull}`,
      });
      if (decision.outcome === 'refused') {
        metrics.rateLimited.inc({ reason: 'api_key' });
        throw ERRORS.keyOverLimit.create(retryAfter);
      }
    });
  },
  { name: 'key-rate-limit', dependencies: ['auth', 'metrics'] },
);
