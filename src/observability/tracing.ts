import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context, propagation, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { FastifyPluginCallback } from 'fastify';
import type { TracingConfig } from '../config/tracing.js';

/** What the service traces with, when tracing is on (startTracing). */
export interface Tracing {
  readonly tracer: Tracer;
  /** Fastify's official instrumentation: a span per request, registered before the routes. */
  readonly requests: FastifyPluginCallback;
  /** The W3C traceparent of the active span (the store's ChangeTrace); null outside any. */
  changeTrace(): string | null;
  /** Sends the spans not sent yet and stops. */
  shutdown(): Promise<void>;
}

/** Paths polled by machines: a span each would bury the requests people ask about. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Starts OpenTelemetry's SDK for this process: spans go in batches to the OTLP/HTTP exporter of the
 * protocol configured (protobuf unless JSON is asked for; docs/performance.md, "Traces", has what each
 * costs), which reads its endpoint, headers, timeout and compression from the standard OTEL_EXPORTER_OTLP_*
 * variables, as the sampler (OTEL_TRACES_SAMPLER) and the batching (OTEL_BSP_*) read theirs. Registered
 * globally, so the W3C trace context propagator and the async-hooks context manager are the API's.
 */
export function startTracing(config: TracingConfig): Tracing {
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': config.serviceName }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor(config.protocol === 'http/json' ? new JsonExporter() : new ProtobufExporter()),
    ],
  });
  provider.register();
  const fastify = new FastifyOtelInstrumentation({
    // A span per hook (a dozen a request) and one for the handler say little the request span and the
    // store's spans do not, and each span costs (docs/performance.md, "Traces").
    instrumentHooks: false,
    instrumentHandler: false,
    ignorePaths: ({ url }) => UNTRACED_PATHS.has(url),
    // Named `METHOD /route`, as OpenTelemetry's HTTP conventions name server spans.
    requestHook: (span, request) => span.updateName(`${request.method} ${request.routeOptions.url ?? ''}`.trim()),
  });
  fastify.setTracerProvider(provider);
  return {
    tracer: provider.getTracer('petstore'),
    requests: fastify.plugin(),
    changeTrace() {
      const carrier: { traceparent?: string } = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent ?? null;
    },
    shutdown: () => provider.shutdown(),
  };
}
