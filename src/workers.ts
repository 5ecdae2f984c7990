import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { pino } from 'pino';
import { UsageError } from './commands/usage-error.js';
import type { Config } from './config.js';
import { announceFirstKey } from './server.js';
import { openStore } from './store/open-store.js';

/** `--workers N` (1 to 64) or `auto` (one per CPU). */
export function parseWorkers(text: string | undefined): number {
  if (text === undefined) return 1;
  if (text === 'auto') return availableParallelism();
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 1 || count > 64) {
    throw new UsageError(`--workers takes a number from 1 to 64 or "auto", got "${text}"`);
  }
  return count;
}

/** A worker that dies is replaced after this delay, so a crash loop cannot spin the CPU. */
const RESPAWN_DELAY_MS = 1000;

/**
 * The primary of `serve --workers N`: migrates once, forks N workers that share the port (node:cluster),
 * replaces a worker that dies, and on SIGTERM/SIGINT stops every worker gracefully and exits 0 when
 * they all did. Workers are stateless; everything shared lives in the database.
 */
export async function runPrimary(config: Config, workers: number): Promise<void> {
  const log = pino({ level: config.logLevel });
  await (await openStore(config.database)).close();

  let stopping = false;
  let failed = false;
  const live = new Set<Worker>();
  const listeningWorkers = new WeakSet<Worker>();
  const fork = () => live.add(cluster.fork());
  cluster.on('listening', (worker) => listeningWorkers.add(worker));

  const listening = new Promise<string>((resolve, reject) => {
    let count = 0;
    cluster.on('listening', (_worker, address) => {
      count++;
      if (count === workers) resolve(`http://${address.address}:${address.port}`);
    });
    cluster.on('exit', (worker, code, signal) => {
      live.delete(worker);
      if (stopping) return;
      if (count < workers) {
        reject(new Error(`a worker exited (${code ?? signal}) before it listened`));
        return;
      }
      log.error({ workerPid: worker.process.pid, code, signal }, 'worker died; starting another');
      setTimeout(() => {
        if (!stopping) fork();
      }, RESPAWN_DELAY_MS);
    });
  });

  const stopAll = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping workers');
    for (const worker of live) {
      // A worker still booting has no handler yet and would die by the signal's default action.
      if (listeningWorkers.has(worker)) worker.process.kill('SIGTERM');
      else worker.once('listening', () => worker.process.kill('SIGTERM'));
    }
  };
  cluster.on('exit', (_worker, code) => {
    if (!stopping) return;
    // Only the stop itself decides the exit status; a crash before it was already handled by a respawn.
    if (code !== 0) failed = true;
    if (live.size === 0) process.exitCode = failed ? 1 : 0;
  });
  process.on('SIGTERM', stopAll);
  process.on('SIGINT', stopAll);

  for (let i = 0; i < workers; i++) fork();
  let url: string;
  try {
    url = await listening;
  } catch (error) {
    stopAll('SIGTERM');
    throw error;
  }
  const store = await openStore(config.database);
  try {
    await announceFirstKey(store, process.stdout);
  } finally {
    await store.close();
  }
  log.info({ url, workers }, 'ready');
}
