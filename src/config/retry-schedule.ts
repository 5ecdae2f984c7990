import { ConfigError } from './config-error.js';

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';
/**
 * Longer waits would outlive the events they deliver at EVENT_RETENTION_DAYS' default; the whole schedule
 * must also fit in the retention set (retention-bound.ts).
 */
const MAX_RETRY_DELAY_MS = 30 * 86_400_000;
const MAX_RETRIES = 50;

/** `5m`: a number and a unit (ms, s, m, h, d), in milliseconds; NaN when it is not one. */
export function durationMs(text: string): number {
  const [, amount = '', unit = ''] = /^(\d+)(ms|s|m|h|d)$/.exec(text) ?? [];
  return Number(amount) * (DURATION_UNITS_MS[unit] ?? Number.NaN);
}

/** `5s,5m,30m`: delays with a unit (ms, s, m, h, d), in milliseconds. */
export function parseRetrySchedule(text: string): readonly number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > MAX_RETRIES) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE has at most ${MAX_RETRIES} delays, got ${entries.length}`);
  }
  return entries.map((entry) => {
    const delay = durationMs(entry);
    if (!(delay >= 1 && delay <= MAX_RETRY_DELAY_MS)) {
      throw new ConfigError(
        `WEBHOOK_RETRY_SCHEDULE must be comma-separated delays from 1ms to 30d, each a number and a unit ` +
          `(ms, s, m, h, d), e.g. ${DEFAULT_RETRY_SCHEDULE}; got "${entry}"`,
      );
    }
    return delay;
  });
}
