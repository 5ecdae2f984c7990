import type { Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../observability/metrics.js';
import type { Store } from '../store/store.js';
import { Dispatcher } from './dispatcher.js';
import type { RedisStartLimits } from './start-limiter.js';
import type { TargetPolicy } from './target-policy.js';

/** How this app sends webhooks (WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_SCHEDULE, WEBHOOK_DISABLE_AFTER). */
export interface DeliveryOptions {
  readonly timeoutMs: number;
  /** Delays before each retry, in ms. */
  readonly retrySchedule: readonly number[];
  /** How long an endpoint fails before it is disabled, in ms; absent: never for failing (a 410 still does). */
  readonly disableAfterMs?: number | undefined;
  /** Endpoints' rate limits in Redis (REDIS_URL); absent: in the database. */
  readonly redisStartLimits?: RedisStartLimits | undefined;
}

interface PluginOptions extends DeliveryOptions {
  readonly store: Store;
  readonly metrics: Metrics;
  readonly policy: TargetPolicy;
  /** Traces each attempt; off when absent. */
  readonly tracer?: Tracer | undefined;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Runs the webhook dispatcher with the app: from ready until close (it stops before the store closes).
 * A successful write answered here may have recorded events, so it wakes the dispatcher at once; events
 * of other processes are found by its poll. Every answer tells the dispatcher's pace that the API is busy.
 */
export const webhookDelivery = fp(
  async (
    app: FastifyInstance,
    { store, metrics, policy, timeoutMs, retrySchedule, disableAfterMs, redisStartLimits, tracer }: PluginOptions,
  ) => {
    // The Redis client is loaded only when the limits are kept there.
    const redis =
      redisStartLimits === undefined
        ? undefined
        : new (await import('./redis-start-limiter.js')).RedisStartLimiter(redisStartLimits);
    const dispatcher = new Dispatcher({
      deliveries: store.deliveries,
      startLimiter: redis ?? store.endpointStarts,
      endpointStarts: store.endpointStarts,
      policy,
      timeoutMs,
      retrySchedule,
      disableAfterMs,
      log: app.log,
      metrics,
      tracer,
    });
    app.addHook('onReady', async () => dispatcher.start());
    app.addHook('preClose', async () => {
      await dispatcher.stop();
      redis?.close();
    });
    app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      dispatcher.answered();
      if (WRITES.has(request.method) && reply.statusCode < 300) dispatcher.changed();
      done();
    });
  },
  { name: 'webhook-delivery' },
);
