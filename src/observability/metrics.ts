import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryStats } from '../store/records.js';
import type { PoolStats } from '../store/store.js';
import type { AroundCall } from '../store/wrapped-store.js';

/**
 * The service's Prometheus metrics, one registry per app (so several apps in one process, as in tests,
 * do not share counts). With `serve --workers N` a scrape of any worker reports all of them, summed.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'petstore_http_requests_total',
    help: 'Requests answered, by operation and status.',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'Time from request to response, by operation and status.',
    labelNames: ['operation', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly deprecatedCalls = new Counter({
    name: 'petstore_deprecated_calls_total',
    help: 'Calls to deprecated operations, by operation and API key id: who still has to move.',
    labelNames: ['operation', 'key_id'] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'petstore_rate_limit_rejections_total',
    help: 'Requests refused with 429, by reason.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly rateLimitFailOpen = new Counter({
    name: 'petstore_rate_limit_fail_open_total',
    help: 'Requests let through unlimited because the shared limiter (Redis) was unavailable.',
    registers: [this.registry],
  });
  readonly logLinesDropped = new Counter({
    name: 'petstore_log_lines_dropped_total',
    help: 'Log lines dropped because stdout fell too far behind (16 MiB of lines per serving process waiting to be written).',
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'petstore_webhook_deliveries_total',
    help:
      'Webhook attempts recorded, by outcome: succeeded (2xx), retried (failed, retried later), failed (the last); ' +
      'and expired: deliveries still pending when retention removed their events, marked failed without an attempt.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveriesRateLimited = new Counter({
    name: 'petstore_webhook_deliveries_rate_limited_total',
    help:
      "Webhook deliveries held back by their endpoint's rateLimit: claimed, then given back unattempted (no " +
      'attempt counted), due again once the endpoint may start one. Each time a delivery is held back counts.',
    registers: [this.registry],
  });

  readonly webhookEndpointsDisabled = new Counter({
    name: 'petstore_webhook_endpoints_disabled_total',
    help:
      'Webhook endpoints the service disabled, by reason: failing (every attempt failed for ' +
      'WEBHOOK_DISABLE_AFTER) or gone (it answered 410 Gone).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly backupFailures = new Counter({
    name: 'petstore_backup_failures_total',
    help: 'Scheduled backups (BACKUP_DIR) that failed; each is logged, and the next is one BACKUP_INTERVAL on.',
    registers: [this.registry],
  });

  readonly storeLatency = new Histogram({
    name: 'petstore_store_call_duration_seconds',
    help: 'Time of each call into the store (one query or transaction), by call and outcome.',
    labelNames: ['call', 'outcome'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  /** For wrapStore: times a store call into storeLatency, by its name and whether it succeeded. */
  readonly timeStoreCall: AroundCall =
    (call, run) =>
    async (...args) => {
      const start = process.hrtime.bigint();
      let ok = false;
      try {
        const result = await run(...args);
        ok = true;
        return result;
      } finally {
        this.storeLatency.observe(
          { call, outcome: ok ? 'ok' : 'error' },
          Number(process.hrtime.bigint() - start) / 1e9,
        );
      }
    };

  constructor(poolStats: () => PoolStats | undefined, deliveryStats: (now: Date) => Promise<DeliveryStats>) {
    collectDefaultMetrics({ register: this.registry, prefix: 'petstore_' });
    // Read at scrape time; a store without a pool (SQLite) shows no pool metrics at all.
    if (poolStats() !== undefined) {
      new Gauge({
        name: 'petstore_db_pool_connections',
        help: 'Database connections by state (open, idle, in_use), waiting callers, and the pool maximum.',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const stats = poolStats();
          if (stats === undefined) return;
          this.set({ state: 'open' }, stats.open);
          this.set({ state: 'idle' }, stats.idle);
          this.set({ state: 'in_use' }, stats.open - stats.idle);
          this.set({ state: 'waiting' }, stats.waiting);
          this.set({ state: 'max' }, stats.max);
        },
      });
    }
    // After the pool's gauge: the scrape's own read of the store must not show in the pool figures.
    this.#watchDeliveries(deliveryStats);
  }

  /**
   * The newest scheduled backup's age and size, read from BACKUP_DIR at scrape time (whichever process
   * wrote it: every worker reads the same directory, so across workers the figures are one, not a sum).
   * Absent until the first backup is written.
   */
  watchBackups(latest: () => { readonly at: Date; readonly bytes: number } | undefined): void {
    const figures: [string, string, (backup: { at: Date; bytes: number }) => number][] = [
      [
        'petstore_backup_age_seconds',
        'Seconds since the newest scheduled backup in BACKUP_DIR was written.',
        (backup) => (Date.now() - backup.at.getTime()) / 1000,
      ],
      ['petstore_backup_size_bytes', 'Size of the newest scheduled backup in BACKUP_DIR.', (backup) => backup.bytes],
    ];
    for (const [name, help, figure] of figures) {
      new Gauge({
        name,
        help,
        aggregator: 'min',
        registers: [this.registry],
        collect() {
          const backup = latest();
          if (backup === undefined) this.reset();
          else this.set(figure(backup));
        },
      });
    }
  }

  /**
   * Read from the store at scrape time, once for both gauges. Every worker reads the same database, so
   * across workers the figures are the largest one's, not a sum. A failed read keeps the last figures, so
   * the scrape still answers.
   */
  #watchDeliveries(deliveryStats: (now: Date) => Promise<DeliveryStats>): void {
    let last: DeliveryStats = { pending: 0, oldestPendingSeconds: 0 };
    let reading: Promise<DeliveryStats> | undefined;
    const read = () => {
      reading ??= deliveryStats(new Date())
        .then(
          (stats) => {
            last = stats;
            return stats;
          },
          () => last,
        )
        .finally(() => {
          reading = undefined;
        });
      return reading;
    };
    const figures: [string, string, (stats: DeliveryStats) => number][] = [
      [
        'petstore_webhook_oldest_pending_seconds',
        'Age of the oldest webhook delivery still pending (to an enabled endpoint), since its event.',
        (stats) => stats.oldestPendingSeconds,
      ],
      [
        'petstore_webhook_pending_deliveries',
        'Webhook deliveries pending (to enabled endpoints): neither succeeded nor failed yet; events not yet fanned out to an endpoint count by position, of its types or not.',
        (stats) => stats.pending,
      ],
    ];
    for (const [name, help, figure] of figures) {
      new Gauge({
        name,
        help,
        aggregator: 'max',
        registers: [this.registry],
        async collect() {
          this.set(figure(await read()));
        },
      });
    }
  }
}
