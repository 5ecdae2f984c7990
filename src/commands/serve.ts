import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config.js';

/**
 * `petstore serve [--workers N]`. Each process loads only what it runs: the primary of `--workers N` only
 * forks, and loading the HTTP server's modules costs about 0.7 s of CPU it would pay for nothing.
 */
export async function serveCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { workers: { type: 'string' } } });
  // Readable lines for a person at a terminal; JSON lines for everything that collects logs.
  const prettyLogs = process.stdout.isTTY === true;
  if (cluster.isPrimary) {
    const { parseWorkers, runPrimary } = await import('../server/workers.js');
    const workers = parseWorkers(values.workers);
    if (workers > 1) return runPrimary(config, workers, prettyLogs);
  }
  const [{ serveUntilSignalled }, { startServer }] = await Promise.all([
    import('../server/signals.js'),
    import('../server/start-server.js'),
  ]);
  await serveUntilSignalled(startServer(config, cluster.isWorker ? { worker: true, prettyLogs } : { prettyLogs }));
}
