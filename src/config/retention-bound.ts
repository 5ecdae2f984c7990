import { ConfigError } from './config-error.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** WEBHOOK_RETRY_SCHEDULE as written (for the message) and parsed, with WEBHOOK_TIMEOUT_MS. */
interface Retries {
  readonly text: string;
  readonly schedule: readonly number[];
  readonly timeoutMs: number;
}

/**
 * Refuses an EVENT_RETENTION_DAYS shorter than a webhook delivery may stay pending: every delay of the
 * schedule, plus every attempt (one more than the delays) taking its whole time-out. Shorter, and the purge
 * would remove events whose deliveries are still being retried (docs/decisions/retention-outlasts-retries.md).
 */
export function checkRetentionOutlastsRetries(retentionDays: number, retries: Retries): void {
  const delays = retries.schedule.reduce((sum, delay) => sum + delay, 0);
  const attempts = retries.schedule.length + 1;
  const pendingAtMost = delays + attempts * retries.timeoutMs;
  if (retentionDays * DAY_MS >= pendingAtMost) return;
  throw new ConfigError(
    `EVENT_RETENTION_DAYS must be at least ${Math.ceil(pendingAtMost / DAY_MS)} to outlast ` +
      `WEBHOOK_RETRY_SCHEDULE=${retries.text} (${(delays / HOUR_MS).toFixed(1)} h of delays) and its ` +
      `${attempts} attempts of up to WEBHOOK_TIMEOUT_MS=${retries.timeoutMs}, got "${retentionDays}"`,
  );
}
