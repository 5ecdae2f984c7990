import { ConfigError } from './config-error.js';
import { durationMs } from './retry-schedule.js';

export const DEFAULT_PORTAL_LINK_TTL = '15m';
export const DEFAULT_PORTAL_LINK_TTL_MS = durationMs(DEFAULT_PORTAL_LINK_TTL);
/** A day at most: a link is a bearer credential in a chat message or an e-mail, and its session lasts as long. */
const MAX_PORTAL_LINK_TTL_MS = 86_400_000;

/** PORTAL_LINK_TTL: how long a portal link, and the session it opens, is valid; a duration like `15m`, in ms. */
export function parsePortalLinkTtl(text: string): number {
  const ms = durationMs(text);
  if (ms >= 1000 && ms <= MAX_PORTAL_LINK_TTL_MS) return ms;
  throw new ConfigError(
    `PORTAL_LINK_TTL must be a duration from 1s to 1d, a number and a unit (ms, s, m, h, d), ` +
      `e.g. ${DEFAULT_PORTAL_LINK_TTL}; got "${text}"`,
  );
}
