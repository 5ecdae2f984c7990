import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../clock.js';
import type { BackupSchedule } from '../config/backup-schedule.js';
import type { Metrics } from '../observability/metrics.js';
import { latestBackup, runScheduledBackup } from '../store/scheduled-backup.js';

/** How often a process looks whether a backup is due: a quarter of the interval, from 1 s to 1 min. */
function lookEveryMs(intervalMs: number): number {
  return Math.min(60_000, Math.max(1000, intervalMs / 4));
}

interface BackupScheduleOptions {
  /** The SQLite database file. */
  readonly database: string;
  readonly schedule: BackupSchedule;
  readonly metrics: Metrics;
  readonly clock: Clock;
}

/**
 * Backups the service writes itself (BACKUP_DIR, BACKUP_INTERVAL, BACKUP_KEEP), with the app: every process
 * looks when it is ready and then regularly; the database gives each turn to one of them, so workers and
 * instances on one file write one backup per interval. A failure is logged and counted, never fatal.
 */
export const backupSchedule = fp(
  async (app: FastifyInstance, { database, schedule, metrics, clock }: BackupScheduleOptions) => {
    metrics.watchBackups(() => latestBackup(schedule));
    let running: Promise<void> | undefined;
    const look = () => {
      running ??= runScheduledBackup(database, schedule, clock())
        .then(
          (done) => {
            if (done === undefined) return;
            const { made, pruned } = done;
            app.log.info({ file: made.file, bytes: made.bytes, pruned }, 'backup written');
          },
          (error: unknown) => {
            metrics.backupFailures.inc();
            app.log.error({ err: error }, 'scheduled backup failed; the next is one BACKUP_INTERVAL on');
          },
        )
        .finally(() => {
          running = undefined;
        });
    };
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      look();
      timer = setInterval(look, lookEveryMs(schedule.intervalMs));
      timer.unref();
    });
    app.addHook('preClose', async () => {
      clearInterval(timer);
      await running;
    });
  },
  { name: 'backup-schedule' },
);
