import { SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { AroundCall } from '../store/wrapped-store.js';

/**
 * For wrapStore: a span for each store call made inside a traced one (a request, a webhook attempt); the
 * polls of background work (claims, retention, the feed's watch) would each start a trace of their own.
 */
export function storeSpans(tracer: Tracer, storeKind: string): AroundCall {
  // OpenTelemetry's name of the database (`db.system.name`).
  const attributes = { 'db.system.name': storeKind === 'postgres' ? 'postgresql' : storeKind };
  return (call, run) =>
    (...args) => {
      if (trace.getActiveSpan() === undefined) return run(...args);
      return tracer.startActiveSpan(
        call,
        { kind: SpanKind.CLIENT, attributes: { ...attributes, 'db.operation.name': call } },
        async (span) => {
          try {
            return await run(...args);
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    };
}
