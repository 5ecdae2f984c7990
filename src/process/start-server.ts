import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import type { Config } from '../config/config.js';
import { joinWorkerMetrics } from '../observability/cluster-metrics.js';
import { openRateLimiter } from '../rate-limit/open-rate-limiter.js';
import type { RateLimitOptions } from '../rate-limit/rate-limit-plugins.js';
import { DEFAULT_LIMITS } from '../server/fastify-options.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { announceFirstKey } from './first-key.js';
import { listenFailure } from './listen-failure.js';
import { loggerOptions, stdoutDestination } from './log-stream.js';
import { logReady } from './ready-line.js';
import { loadTlsFiles } from './tls-files.js';
import { WorkerLogStream } from './worker-log-relay.js';
import { workerWriteTurns } from './write-turn-ipc.js';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly url: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** A cluster worker leaves the first key and the ready line to the primary process. */
  readonly worker?: boolean;
  /** Where the first key is printed: stderr, apart from the log lines on stdout. */
  readonly out?: NodeJS.WritableStream;
  /** Human-readable log lines (a terminal is watching) instead of JSON. */
  readonly prettyLogs?: boolean;
}

/** Opens the store, listens, then issues the first key if there is none. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  if (options.worker === true) joinWorkerMetrics();
  // Loaded only when on: off, no part of OpenTelemetry's SDK is in the process.
  const tracing =
    config.tracing === undefined
      ? undefined
      : (await import('../observability/tracing.js')).startTracing(config.tracing);
  let store: Store;
  try {
    // Workers sharing a SQLite file take turns to write, handed out by the primary.
    store = await openStore(config.database, {
      sqliteTurns: options.worker === true ? workerWriteTurns : undefined,
      trace: tracing === undefined ? undefined : () => tracing.changeTrace(),
    });
  } catch (error) {
    await tracing?.shutdown();
    throw error;
  }
  // A worker's lines go to its primary, which alone writes stdout (and chose JSON or readable lines).
  const destination = options.worker === true ? new WorkerLogStream() : stdoutDestination(options.prettyLogs ?? false);
  let app: FastifyInstance;
  let rateLimit: RateLimitOptions | undefined;
  try {
    rateLimit = await openRateLimiter(config);
    app = await buildApp({
      store,
      publicUrl: config.publicUrl,
      logger: { ...loggerOptions(config.logLevel), stream: destination },
      tls: config.tls === undefined ? undefined : loadTlsFiles(config.tls),
      rateLimit,
      trustProxy: config.trustProxy,
      webhooks: { allowPrivateUrls: config.webhookAllowPrivateUrls },
      // Every serving process sends: deliveries are claimed, so processes and instances share the work.
      webhookDelivery: {
        timeoutMs: config.webhookTimeoutMs,
        retrySchedule: config.webhookRetrySchedule,
        disableAfterMs: config.webhookDisableAfterMs,
        redisStartLimits: config.redisUrl === undefined ? undefined : { url: config.redisUrl },
      },
      eventRetentionDays: config.eventRetentionDays,
      auditRetentionDays: config.auditRetentionDays,
      eventStreams: config.eventStreams,
      webhookEndpointsPerOwner: config.webhookEndpointsPerOwner,
      portalLinkTtlMs: config.portalLinkTtlMs,
      limits: { ...DEFAULT_LIMITS, maxConnectionsPerAddress: config.maxConnectionsPerAddress },
      metricsAcrossWorkers: options.worker === true,
      tracing,
      backups:
        config.backups === undefined || config.database.kind !== 'sqlite'
          ? undefined
          : { database: config.database.path, schedule: config.backups },
    });
  } catch (error) {
    await rateLimit?.limiter.close();
    await store.close();
    await tracing?.shutdown();
    throw error;
  }
  app.addHook('onClose', async () => {
    await rateLimit?.limiter.close();
    await store.close();
    // Last: the spans of the requests and attempts that just ended are sent.
    await tracing?.shutdown();
  });

  let url: string;
  try {
    url = await app.listen({ host: config.host, port: config.port });
    if (options.worker !== true) {
      // After listening, so a server that cannot start never consumes the one-time first key.
      await announceFirstKey(store, options.out ?? process.stderr);
      logReady(app.log, { url });
    }
  } catch (error) {
    // A start that fails half-way closes what it opened (the store closes with the app).
    await app.close();
    throw listenFailure(error);
  }
  return { app, url, stop: () => app.stopGracefully() };
}
