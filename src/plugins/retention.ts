import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../clock.js';
import type { Metrics } from '../observability/metrics.js';
import type { Store } from '../store/store.js';

/**
 * Expired idempotency records (older than 24 h), and events and audit log entries past their retention, are
 * removed this often.
 */
const PURGE_INTERVAL_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

interface RetentionOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** EVENT_RETENTION_DAYS. */
  readonly eventRetentionDays: number;
  /** AUDIT_RETENTION_DAYS. */
  readonly auditRetentionDays: number;
}

/**
 * Removes what the store keeps only for a time, with the app: once when it is ready (a process restarted
 * more often than the interval would otherwise never purge), then every PURGE_INTERVAL_MS until it closes.
 * Every instance purges; the deletes are idempotent, so instances need not agree on who does.
 */
export const retention = fp(
  async (app: FastifyInstance, { store, clock, metrics, eventRetentionDays, auditRetentionDays }: RetentionOptions) => {
    const purge = () => {
      const now = clock();
      store.purgeExpiredIdempotencyKeys(now).catch((error: unknown) => {
        app.log.warn({ err: error }, 'purging expired idempotency keys failed; will retry');
      });
      store.events.purge(new Date(now.getTime() - eventRetentionDays * DAY_MS), now).then(
        ({ expired }) => {
          if (expired === 0) return;
          // The store has marked each `failed` in its endpoint's log; an operator hears of it here.
          metrics.webhookDeliveries.inc({ outcome: 'expired' }, expired);
          app.log.warn(
            { expired },
            'webhook deliveries still pending when their events passed EVENT_RETENTION_DAYS: marked failed',
          );
        },
        (error: unknown) => {
          app.log.warn({ err: error }, 'removing events past their retention failed; will retry');
        },
      );
      store.audit.purge(new Date(now.getTime() - auditRetentionDays * DAY_MS)).catch((error: unknown) => {
        app.log.warn({ err: error }, 'removing audit log entries past AUDIT_RETENTION_DAYS failed; will retry');
      });
    };
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      purge();
      timer = setInterval(purge, PURGE_INTERVAL_MS);
      timer.unref();
    });
    app.addHook('preClose', async () => clearInterval(timer));
  },
  { name: 'retention' },
);
