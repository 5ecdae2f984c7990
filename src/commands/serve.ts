import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Config } from '../config/config.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

/** `--workers N` (1 to 64) or `auto` (one per CPU). */
function parseWorkers(text: string | undefined): number {
  if (text === undefined) return 1;
  if (text === 'auto') return availableParallelism();
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 1 || count > 64) {
    throw new UsageError(`--workers takes a number from 1 to 64 or "auto", got "${text}"`);
  }
  return count;
}

/**
 * `petstore serve [--workers N]`. Each process loads only what it runs: the primary of `--workers N` only
 * forks, and loading the HTTP server's modules costs about 0.7 s of CPU it would pay for nothing.
 */
export async function serveCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseOptions(args, { workers: { type: 'string' } });
  // Readable lines for a person at a terminal; JSON lines for everything that collects logs.
  const prettyLogs = process.stdout.isTTY === true;
  if (cluster.isPrimary) {
    const workers = parseWorkers(values.workers);
    if (workers > 1) {
      const { runPrimary } = await import('../process/workers.js');
      return runPrimary(config, workers, prettyLogs);
    }
  }
  const [{ serveUntilSignalled }, { startServer }] = await Promise.all([
    import('../process/signals.js'),
    import('../process/start-server.js'),
  ]);
  await serveUntilSignalled(startServer(config, cluster.isWorker ? { worker: true, prettyLogs } : { prettyLogs }));
}
