import { type Attributes, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { AroundCall } from '../store/wrapped-store.js';

/**
 * For wrapStore: a span for each store call made inside a recorded one (a request or a webhook attempt that
 * was sampled). A call outside any, or inside one the sampler left out, runs as it would untraced: the polls
 * of background work (claims, retention, the feed's watch) would each start a trace of their own, and a
 * span under one not recorded would not be recorded either, only cost.
 */
export function storeSpans(tracer: Tracer, storeKind: string): AroundCall {
  // OpenTelemetry's name of the database (`db.system.name`).
  const system = storeKind === 'postgres' ? 'postgresql' : storeKind;
  return (call, run) => {
    // Made once per call name, when the store is wrapped: the span copies them.
    const options = {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': system, 'db.operation.name': call } satisfies Attributes,
    };
    return (...args) => {
      if (trace.getActiveSpan()?.isRecording() !== true) return run(...args);
      return tracer.startActiveSpan(call, options, async (span) => {
        try {
          return await run(...args);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      });
    };
  };
}
