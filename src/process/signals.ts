import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { RunningServer } from './start-server.js';

/** How long a graceful stop may take before the process gives up on in-flight requests. */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Serves until SIGTERM/SIGINT, then stops gracefully: no new connections, in-flight requests finish,
 * the store closes, exit 0. The handlers are installed before the server starts, so a signal that
 * arrives during start-up still ends in a graceful stop rather than the default abrupt exit.
 *
 * Not close-with-grace: it exits at once on a second signal, and a Ctrl-C at a terminal signals the whole
 * process group, so `serve --workers N`'s workers would get SIGINT and then their primary's SIGTERM and
 * die mid-drain; it also calls process.exit itself, before a worker's IPC channel is let go.
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
        // The last line says the stop completed, so a log reader need not infer it from silence.
        server.app.log.info({ signal }, 'stopped');
        // A worker's last lines leave for its primary before the channel they go through is let go.
        // (Fastify's logger is pino's, which flushes its destination.)
        await new Promise<void>((resolve) => (server.app.log as Logger).flush(() => resolve()));
        // A cluster worker's IPC channel goes first, so its primary sees a worker that meant to exit.
        const worker = cluster.worker;
        if (worker?.isConnected() === true) {
          await new Promise<void>((resolve) => {
            worker.once('disconnect', resolve);
            worker.disconnect();
          });
        }
        // Now, not once the event loop has emptied (it has, within milliseconds): a natural exit first frees
        // V8's heap page by page, which took 0.6–1.5 s on a loaded machine; exit() leaves that to the kernel.
        process.exit(0);
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
