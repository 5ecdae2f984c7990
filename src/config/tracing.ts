import { ConfigError } from './config-error.js';

/** How spans are encoded over OTLP/HTTP: protobuf, the specification's default, or JSON. */
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** OpenTelemetry traces, exported over OTLP/HTTP (docs/operations.md, "Traces"). */
export interface TracingConfig {
  /** OTEL_SERVICE_NAME: the `service.name` every span carries; `petstore` when unset. */
  readonly serviceName: string;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL; `http/protobuf` when unset. */
  readonly protocol: OtlpProtocol;
}

/** The standard OTEL_* variables that decide whether traces are on; the SDK reads the rest itself. */
export interface TracingSettings {
  readonly endpoint: string | undefined;
  readonly tracesEndpoint: string | undefined;
  readonly sdkDisabled: string | undefined;
  readonly tracesExporter: string | undefined;
  readonly protocol: string | undefined;
  readonly serviceName: string | undefined;
}

/**
 * On when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), as the
 * OpenTelemetry specification has it, unless OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is `none`.
 * The exporter speaks OTLP over HTTP, protobuf unless JSON is asked for; asking for gRPC is refused rather
 * than sent where it cannot be read.
 */
export function parseTracing(settings: TracingSettings): TracingConfig | undefined {
  if (settings.endpoint === undefined && settings.tracesEndpoint === undefined) return undefined;
  if (settings.sdkDisabled?.toLowerCase() === 'true') return undefined;
  const exporter = settings.tracesExporter?.toLowerCase();
  if (exporter === 'none') return undefined;
  if (exporter !== undefined && exporter !== 'otlp') {
    throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${settings.tracesExporter}"`);
  }
  const protocol = OTLP_PROTOCOLS.find((known) => known === (settings.protocol ?? 'http/protobuf'));
  if (protocol === undefined) {
    throw new ConfigError(
      `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (or OTEL_EXPORTER_OTLP_PROTOCOL) must be http/protobuf or http/json: ` +
        `traces are sent over OTLP/HTTP; got "${settings.protocol}"`,
    );
  }
  return { serviceName: settings.serviceName ?? 'petstore', protocol };
}
