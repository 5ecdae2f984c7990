import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import { issueFirstApiKey } from './services/api-keys.js';
import { openStore } from './store/open-store.js';

/** How long a graceful stop may take before the process gives up on in-flight requests. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly url: string;
  stop(): Promise<void>;
}

/** Opens the store, issues the first key if there is none, and listens. */
export async function startServer(config: Config, out: NodeJS.WritableStream = process.stdout): Promise<RunningServer> {
  const store = await openStore(config.database);
  let app: FastifyInstance;
  try {
    app = await buildApp({
      store,
      publicUrl: config.publicUrl,
      logger: { level: config.logLevel, redact: ['req.headers.authorization'] },
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  app.addHook('onClose', async () => store.close());

  const url = await app.listen({ host: config.host, port: config.port });
  // After listening, so a server that cannot start never consumes the one-time first key.
  const first = await issueFirstApiKey(store, systemClock);
  if (first !== undefined) {
    out.write(
      `\nNo API keys existed, so petstore created one. It is shown only this once; keep it safe:\n\n  ${first.key}\n\n` +
        'Use it as "Authorization: Bearer <key>". Manage keys with "petstore keys create|list|revoke".\n\n',
    );
  }
  app.log.info({ url }, 'ready');
  return { app, url, stop: () => app.close() };
}

/** Stops gracefully on SIGTERM/SIGINT: no new connections, in-flight requests finish, the store closes. */
export function stopOnSignals(server: RunningServer): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'stopping');
    const timer = setTimeout(() => {
      server.app.log.error('graceful stop timed out; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    timer.unref();
    server.stop().then(
      () => {
        process.exitCode = 0;
      },
      (error: unknown) => {
        server.app.log.error({ err: error }, 'error while stopping');
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
