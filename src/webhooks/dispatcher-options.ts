import type { Tracer } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from '../observability/metrics.js';
import type { DeliveryStore, EndpointStartStore } from '../store/store.js';
import type { StartLimiter } from './start-limiter.js';
import type { TargetPolicy } from './target-policy.js';

/** What the dispatcher is given, and passes on to each attempt. */
export interface DispatcherOptions {
  readonly deliveries: DeliveryStore;
  /** Where endpoints' rate limits are kept (Redis, else the database), and the store that holds deliveries back. */
  readonly startLimiter: StartLimiter;
  readonly endpointStarts: Pick<EndpointStartStore, 'holdBack'>;
  readonly policy: TargetPolicy;
  /** WEBHOOK_TIMEOUT_MS: the whole of one attempt. */
  readonly timeoutMs: number;
  /** WEBHOOK_RETRY_SCHEDULE, in ms: the delay before each retry; a failure after the last one is final. */
  readonly retrySchedule: readonly number[];
  /** WEBHOOK_DISABLE_AFTER, in ms: an endpoint failing that long is disabled; undefined: never for failing. */
  readonly disableAfterMs: number | undefined;
  readonly log: FastifyBaseLogger;
  readonly metrics: Metrics;
  /** Traces each attempt (AttemptSpan); tracing is off when absent. */
  readonly tracer?: Tracer | undefined;
}
