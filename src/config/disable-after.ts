import { ConfigError } from './config-error.js';
import { durationMs } from './retry-schedule.js';

export const DEFAULT_DISABLE_AFTER = '5d';
const MAX_DISABLE_AFTER_MS = 365 * 86_400_000;

/**
 * WEBHOOK_DISABLE_AFTER: how long every attempt to an endpoint must have failed before the service disables
 * it, a duration like WEBHOOK_RETRY_SCHEDULE's (`5d`, `12h`), in ms; `0` (undefined): never for failing.
 */
export function parseDisableAfter(text: string): number | undefined {
  if (text === '0') return undefined;
  const ms = durationMs(text);
  if (ms >= 1 && ms <= MAX_DISABLE_AFTER_MS) return ms;
  throw new ConfigError(
    `WEBHOOK_DISABLE_AFTER must be a duration from 1ms to 365d, a number and a unit (ms, s, m, h, d), ` +
      `e.g. ${DEFAULT_DISABLE_AFTER}, or 0 for never; got "${text}"`,
  );
}
