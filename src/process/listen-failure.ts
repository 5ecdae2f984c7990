import { ConfigError } from '../config/config-error.js';

/** What to change when the server cannot listen, by Node's error code: the setting is the way out. */
const WAY_OUT: Record<string, string> = {
  EADDRINUSE: 'another process listens there; set PORT (or HOST) to a free one',
  EADDRNOTAVAIL: 'no interface of this machine has that address; set HOST to one it has (0.0.0.0 for all)',
  EACCES: 'ports below 1024 need privileges; set PORT to 1024 or above',
};

/** A listen failure that names its setting, as every other configuration error does; anything else as it is. */
export function listenFailure(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const wayOut = typeof code === 'string' ? WAY_OUT[code] : undefined;
  if (wayOut === undefined) return error;
  return new ConfigError(`${(error as Error).message}: ${wayOut}`);
}
