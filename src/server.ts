import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import { joinWorkerMetrics } from './http/cluster-metrics.js';
import type { RateLimitOptions } from './http/rate-limit.js';
import { MemoryRateLimiter } from './limits/memory-rate-limiter.js';
import { logDestination, loggerOptions } from './logger.js';
import { issueFirstApiKey } from './services/api-keys.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

/** How long a graceful stop may take before the process gives up on in-flight requests. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** Expired idempotency records (older than 24 h) are removed this often. */
const PURGE_INTERVAL_MS = 10 * 60 * 1000;

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Redis-backed limits when REDIS_URL is set (one limit across instances), else per process; none when off.
 * The Redis client is loaded only then (it is the largest module the service would otherwise load unused).
 */
async function rateLimitOptions(
  config: Config,
  log: () => FastifyInstance['log'] | undefined,
): Promise<RateLimitOptions | undefined> {
  if (config.rateLimit === undefined) return undefined;
  if (config.redisUrl === undefined) return { limiter: new MemoryRateLimiter(), perKey: config.rateLimit };
  const { RedisRateLimiter } = await import('./limits/redis-rate-limiter.js');
  let lastLogged = 0;
  const limiter = new RedisRateLimiter({
    url: config.redisUrl,
    onFailOpen: (error) => {
      // Once a minute at most: an outage would otherwise log on every request. /metrics counts each one.
      if (Date.now() - lastLogged < 60_000) return;
      lastLogged = Date.now();
      log()?.warn({ err: error }, 'Redis unavailable: rate limits are not enforced until it returns');
    },
  });
  return { limiter, perKey: config.rateLimit };
}

/** On a store with no keys at all, creates one and prints it, once; does nothing otherwise. */
export async function announceFirstKey(store: Store, out: NodeJS.WritableStream): Promise<void> {
  const first = await issueFirstApiKey(store, systemClock);
  if (first === undefined) return;
  out.write(
    `\nNo API keys existed, so petstore created one. It is shown only this once; keep it safe:\n\n  ${first.key}\n\n` +
      'Use it as "Authorization: Bearer <key>". Manage keys with "petstore keys create|list|revoke".\n\n',
  );
}

export interface StartOptions {
  /** A cluster worker leaves the first key and the ready line to the primary process. */
  readonly worker?: boolean;
  readonly out?: NodeJS.WritableStream;
  /** Human-readable log lines (a terminal is watching) instead of JSON. */
  readonly prettyLogs?: boolean;
}

/** Opens the store, listens, then issues the first key if there is none. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  if (options.worker === true) joinWorkerMetrics();
  const store = await openStore(config.database);
  let app: FastifyInstance | undefined;
  const pretty = options.prettyLogs ?? false;
  const destination = logDestination(pretty, options.worker === true);
  let rateLimit: RateLimitOptions | undefined;
  try {
    rateLimit = await rateLimitOptions(config, () => app?.log);
    app = await buildApp({
      store,
      publicUrl: config.publicUrl,
      logger: {
        ...loggerOptions(config.logLevel, pretty),
        ...(destination === undefined ? {} : { stream: destination }),
      },
      tls:
        config.tls === undefined
          ? undefined
          : { cert: readFileSync(config.tls.certPath), key: readFileSync(config.tls.keyPath) },
      rateLimit,
      metricsAcrossWorkers: options.worker === true,
    });
  } catch (error) {
    await rateLimit?.limiter.close();
    await store.close();
    throw error;
  }
  app.addHook('onClose', async () => {
    await rateLimit?.limiter.close();
    await store.close();
  });

  const purge = setInterval(() => {
    store.purgeExpiredIdempotencyKeys(systemClock()).catch((error: unknown) => {
      app.log.warn({ err: error }, 'purging expired idempotency keys failed; will retry');
    });
  }, PURGE_INTERVAL_MS);
  purge.unref();
  app.addHook('onClose', async () => clearInterval(purge));

  let url: string;
  try {
    url = await app.listen({ host: config.host, port: config.port });
    if (options.worker !== true) {
      // After listening, so a server that cannot start never consumes the one-time first key.
      await announceFirstKey(store, options.out ?? process.stdout);
      app.log.info({ url }, 'ready');
    }
  } catch (error) {
    // A start that fails half-way closes what it opened (the store closes with the app).
    await app.close();
    throw error;
  }
  return { app, url, stop: () => app.close() };
}

/**
 * Serves until SIGTERM/SIGINT, then stops gracefully: no new connections, in-flight requests finish,
 * the store closes, exit 0. The handlers are installed before the server starts, so a signal that
 * arrives during start-up still ends in a graceful stop rather than the default abrupt exit.
 */
export async function serveUntilSignalled(starting: Promise<RunningServer>): Promise<void> {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const timer = setTimeout(() => {
      process.stderr.write('petstore: graceful stop timed out; exiting\n');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    timer.unref();
    starting
      .then(async (server) => {
        server.app.log.info({ signal }, 'stopping');
        await server.stop();
        process.exitCode = 0;
        // A cluster worker's IPC channel would keep it alive; with the server closed, let it go.
        cluster.worker?.disconnect();
      })
      .catch(() => {
        // A failed start is reported by the caller; a failed stop leaves a non-zero status.
        process.exitCode = 1;
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await starting;
}
