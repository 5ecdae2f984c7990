import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import type { Config } from '../config/config.js';
import { aggregateWorkerMetrics } from '../observability/cluster-metrics.js';
import { openStore } from '../store/open-store.js';
import { announceFirstKey } from './first-key.js';
import { loggerOptions } from './log-stream.js';
import { logReady } from './ready-line.js';
import { SHUTDOWN_GRACE_MS } from './signals.js';
import { relayWorkerLogs } from './worker-log-relay.js';
import { arbitrateWriteTurns } from './write-turn-ipc.js';

/** A dead worker is replaced after a delay that doubles while workers keep dying young. */
const RESPAWN_DELAY_MS = { first: 1000, max: 30_000 };
/** A worker that lived this long counts as healthy: the delay starts again from the first. */
const HEALTHY_AFTER_MS = 60_000;
/** Past the workers' own graceful-stop limit, the primary stops waiting and kills what is left. */
const KILL_AFTER_MS = SHUTDOWN_GRACE_MS + 5000;

/**
 * The primary of `serve --workers N`: migrates once, forks N workers that share the port (node:cluster),
 * replaces a worker that dies (with backoff), and on SIGTERM/SIGINT stops every worker gracefully,
 * exiting 0 when they all stopped cleanly. Workers are stateless; everything shared lives in the database.
 */
export async function runPrimary(config: Config, workers: number, prettyLogs: boolean): Promise<void> {
  // The one writer of stdout: its own lines and its workers'.
  const log = pino(loggerOptions(config.logLevel), relayWorkerLogs(prettyLogs, workers));
  await (await openStore(config.database)).close();

  let stopping = false;
  let failed = false;
  let respawnDelay = RESPAWN_DELAY_MS.first;
  const live = new Map<Worker, number>();
  const listened = new Set<number>();
  const fork = () => live.set(cluster.fork(), Date.now());

  const stopAll = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping workers');
    // Workers install their handlers before they start, so every one of them stops gracefully.
    for (const worker of live.keys()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of live.keys()) worker.process.kill('SIGKILL');
    }, KILL_AFTER_MS).unref();
  };
  process.on('SIGTERM', stopAll);
  process.on('SIGINT', stopAll);

  const listening = new Promise<string>((resolve, reject) => {
    cluster.on('listening', (worker, address) => {
      // Counted by worker, not by event: a worker may listen on more than one address.
      listened.add(worker.id);
      if (listened.size === workers) {
        const host = address.address?.includes(':') ? `[${address.address}]` : address.address;
        resolve(`http://${host}:${address.port}`);
      }
    });
    cluster.on('exit', (worker, code, signal) => {
      const startedAt = live.get(worker) ?? Date.now();
      live.delete(worker);
      if (stopping) {
        // A worker stopped by the signal before it could handle it had nothing in flight.
        if (code !== 0 && signal !== 'SIGTERM') failed = true;
        if (live.size === 0) process.exitCode = failed || (process.exitCode ?? 0) !== 0 ? 1 : 0;
        return;
      }
      if (listened.size < workers) {
        reject(new Error(`a worker exited (${code ?? signal}) before it listened`));
        return;
      }
      respawnDelay = Date.now() - startedAt > HEALTHY_AFTER_MS ? RESPAWN_DELAY_MS.first : respawnDelay;
      log.error({ workerPid: worker.process.pid, code, signal, respawnInMs: respawnDelay }, 'worker died');
      setTimeout(() => {
        if (!stopping) fork();
      }, respawnDelay);
      respawnDelay = Math.min(respawnDelay * 2, RESPAWN_DELAY_MS.max);
    });
  });

  aggregateWorkerMetrics();
  if (config.database.kind === 'sqlite') arbitrateWriteTurns();
  for (let i = 0; i < workers; i++) fork();
  let url: string;
  try {
    url = await listening;
  } catch (error) {
    stopAll('SIGTERM');
    throw error;
  }
  if (stopping) return;
  const store = await openStore(config.database);
  try {
    await announceFirstKey(store, process.stderr);
  } finally {
    await store.close();
  }
  logReady(log, { url, workers });
}
