import { type BackupSchedule, parseBackupSchedule } from './backup-schedule.js';
import { type DatabaseConfig, parseDatabaseUrl } from './database-url.js';
import { DEFAULT_DISABLE_AFTER, parseDisableAfter } from './disable-after.js';
import { DEFAULT_PORTAL_LINK_TTL, parsePortalLinkTtl } from './portal-link-ttl.js';
import { checkRetentionOutlastsRetries } from './retention-bound.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './retry-schedule.js';
import { parseTracing, type TracingConfig } from './tracing.js';
import { parseTrustProxy } from './trust-proxy.js';
import {
  type LogLevel,
  nonEmpty,
  parseBoolean,
  parseInteger,
  parseLogLevel,
  parsePort,
  parsePublicUrl,
  parseRateLimit,
  parseRedisUrl,
  parseSwitch,
  parseTls,
  type TlsFiles,
} from './values.js';

/** Everything the service reads from its environment, read once at start and passed down. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly database: DatabaseConfig;
  /** Origin (and optional path prefix) in front of `/v1` in absolute links; relative links when absent. */
  readonly publicUrl: string | undefined;
  readonly logLevel: LogLevel;
  /** Per API key; undefined when RATE_LIMIT_RPS=0 turns it off. */
  readonly rateLimit: { readonly perSecond: number; readonly burst: number } | undefined;
  /** Failed authentications per client address; a setting of its own, so RATE_LIMIT_RPS=0 keeps it on. */
  readonly authFailureLimit: boolean;
  /** Proxies (addresses, CIDRs) whose X-Forwarded-For names the client; none when empty. */
  readonly trustProxy: readonly string[];
  /** Redis for state shared by instances (rate limits); per process when absent. */
  readonly redisUrl: string | undefined;
  /** PEM files for HTTPS (HTTP/2 with HTTP/1.1 fallback); plain HTTP when absent. */
  readonly tls: TlsFiles | undefined;
  /** Connections one client address may hold open; behind a proxy every client shares the proxy's. */
  readonly maxConnectionsPerAddress: number;
  /**
   * Days events stay in the feed (EVENT_RETENTION_DAYS); older ones are removed, with their deliveries.
   * At least as long as a delivery may stay pending (retention-bound.ts).
   */
  readonly eventRetentionDays: number;
  /** Days audit log entries are kept (AUDIT_RETENTION_DAYS); older ones are removed. */
  readonly auditRetentionDays: number;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: webhooks may point to any address, and use http:// (internal networks, tests). */
  readonly webhookAllowPrivateUrls: boolean;
  /** How long one webhook attempt may take in all (WEBHOOK_TIMEOUT_MS): resolving, connecting, answering. */
  readonly webhookTimeoutMs: number;
  /** The delays before each retry of a failed delivery, in ms (WEBHOOK_RETRY_SCHEDULE); then it has failed. */
  readonly webhookRetrySchedule: readonly number[];
  /**
   * How long every attempt to an endpoint must have failed before the service disables it, in ms
   * (WEBHOOK_DISABLE_AFTER); undefined: never for failing (a 410 Gone disables it at once all the same).
   */
  readonly webhookDisableAfterMs: number | undefined;
  /** WEBHOOK_ENDPOINTS_PER_OWNER: endpoints one owner may have; one more is 409. */
  readonly webhookEndpointsPerOwner: number;
  /** PORTAL_LINK_TTL: how long a portal link, and the session it opens, lasts, in ms. */
  readonly portalLinkTtlMs: number;
  readonly eventStreams: EventStreamLimits;
  /** BACKUP_DIR, BACKUP_INTERVAL, BACKUP_KEEP: backups the service writes itself (SQLite); none when absent. */
  readonly backups: BackupSchedule | undefined;
  /** OTEL_EXPORTER_OTLP_ENDPOINT and the other standard OTEL_* variables: traces; off when absent. */
  readonly tracing: TracingConfig | undefined;
}

/** Bounds on live event streams (Server-Sent Events), per process. */
export interface EventStreamLimits {
  /**
   * EVENT_STREAMS_PER_OWNER: streams one owner's keys may hold open at once, all together; more are 429. The
   * older EVENT_STREAMS_PER_KEY is read as its value when it is not set.
   */
  readonly perOwner: number;
  /** EVENT_STREAMS: streams the process serves at once, all keys together; more are 429. */
  readonly perProcess: number;
  /** EVENT_STREAM_BUFFER_BYTES: what a stream may hold unsent before it is dropped (its client is not reading). */
  readonly bufferBytes: number;
}

/**
 * Each stream reads the store on every wake, so their number, not their bytes, is what costs the API
 * (docs/decisions/stream-bounds.md).
 */
export const DEFAULT_EVENT_STREAM_LIMITS: EventStreamLimits = { perOwner: 20, perProcess: 500, bufferBytes: 65_536 };

export const DEFAULT_EVENT_RETENTION_DAYS = 30;
export const DEFAULT_ENDPOINTS_PER_OWNER = 50;
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

/** Reads and validates the environment. The only place in the service that looks at process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const retryScheduleText = nonEmpty(env.WEBHOOK_RETRY_SCHEDULE) ?? DEFAULT_RETRY_SCHEDULE;
  const database = parseDatabaseUrl(nonEmpty(env.DATABASE_URL), env);
  const config: Config = {
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port: parsePort(nonEmpty(env.PORT)),
    database,
    publicUrl: parsePublicUrl(nonEmpty(env.PUBLIC_URL)),
    logLevel: parseLogLevel(nonEmpty(env.LOG_LEVEL)),
    tls: parseTls(nonEmpty(env.TLS_CERT), nonEmpty(env.TLS_KEY)),
    rateLimit: parseRateLimit(nonEmpty(env.RATE_LIMIT_RPS), nonEmpty(env.RATE_LIMIT_BURST)),
    authFailureLimit: parseSwitch('AUTH_FAILURE_LIMIT', nonEmpty(env.AUTH_FAILURE_LIMIT), true),
    trustProxy: parseTrustProxy(nonEmpty(env.TRUST_PROXY)),
    redisUrl: parseRedisUrl(nonEmpty(env.REDIS_URL)),
    webhookAllowPrivateUrls: parseBoolean(
      'WEBHOOK_ALLOW_PRIVATE_URLS',
      nonEmpty(env.WEBHOOK_ALLOW_PRIVATE_URLS),
      false,
    ),
    // Up to the process's 10 000 connections, which turns the per-address bound off.
    maxConnectionsPerAddress: parseInteger(
      'MAX_CONNECTIONS_PER_ADDRESS',
      nonEmpty(env.MAX_CONNECTIONS_PER_ADDRESS),
      1000,
      1,
      10_000,
    ),
    eventRetentionDays: parseInteger(
      'EVENT_RETENTION_DAYS',
      nonEmpty(env.EVENT_RETENTION_DAYS),
      DEFAULT_EVENT_RETENTION_DAYS,
      1,
      3650,
    ),
    auditRetentionDays: parseInteger(
      'AUDIT_RETENTION_DAYS',
      nonEmpty(env.AUDIT_RETENTION_DAYS),
      DEFAULT_AUDIT_RETENTION_DAYS,
      1,
      36_500,
    ),
    webhookTimeoutMs: parseInteger('WEBHOOK_TIMEOUT_MS', nonEmpty(env.WEBHOOK_TIMEOUT_MS), 10_000, 100, 600_000),
    webhookRetrySchedule: parseRetrySchedule(retryScheduleText),
    webhookDisableAfterMs: parseDisableAfter(nonEmpty(env.WEBHOOK_DISABLE_AFTER) ?? DEFAULT_DISABLE_AFTER),
    webhookEndpointsPerOwner: parseInteger(
      'WEBHOOK_ENDPOINTS_PER_OWNER',
      nonEmpty(env.WEBHOOK_ENDPOINTS_PER_OWNER),
      DEFAULT_ENDPOINTS_PER_OWNER,
      1,
      100_000,
    ),
    portalLinkTtlMs: parsePortalLinkTtl(nonEmpty(env.PORTAL_LINK_TTL) ?? DEFAULT_PORTAL_LINK_TTL),
    eventStreams: {
      perOwner: parseInteger(
        env.EVENT_STREAMS_PER_OWNER === undefined && env.EVENT_STREAMS_PER_KEY !== undefined
          ? 'EVENT_STREAMS_PER_KEY'
          : 'EVENT_STREAMS_PER_OWNER',
        nonEmpty(env.EVENT_STREAMS_PER_OWNER) ?? nonEmpty(env.EVENT_STREAMS_PER_KEY),
        DEFAULT_EVENT_STREAM_LIMITS.perOwner,
        1,
        10_000,
      ),
      perProcess: parseInteger(
        'EVENT_STREAMS',
        nonEmpty(env.EVENT_STREAMS),
        DEFAULT_EVENT_STREAM_LIMITS.perProcess,
        1,
        10_000,
      ),
      bufferBytes: parseInteger(
        'EVENT_STREAM_BUFFER_BYTES',
        nonEmpty(env.EVENT_STREAM_BUFFER_BYTES),
        DEFAULT_EVENT_STREAM_LIMITS.bufferBytes,
        1024,
        67_108_864,
      ),
    },
    backups: parseBackupSchedule(
      nonEmpty(env.BACKUP_DIR),
      nonEmpty(env.BACKUP_INTERVAL),
      nonEmpty(env.BACKUP_KEEP),
      database,
    ),
    tracing: parseTracing({
      endpoint: nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT),
      tracesEndpoint: nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
      sdkDisabled: nonEmpty(env.OTEL_SDK_DISABLED),
      tracesExporter: nonEmpty(env.OTEL_TRACES_EXPORTER),
      protocol: nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL),
      serviceName: nonEmpty(env.OTEL_SERVICE_NAME),
    }),
  };
  checkRetentionOutlastsRetries(config.eventRetentionDays, {
    text: retryScheduleText,
    schedule: config.webhookRetrySchedule,
    timeoutMs: config.webhookTimeoutMs,
  });
  return config;
}
