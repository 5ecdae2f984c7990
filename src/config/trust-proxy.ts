import { isIP } from 'node:net';
import { ConfigError } from './config-error.js';

/** Names Fastify (proxy-addr) gives to address ranges, e.g. `loopback` for a proxy on the same machine. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** Checked here, so a typo stops the start naming the entry instead of failing inside Fastify. */
export function parseTrustProxy(text: string | undefined): readonly string[] {
  if (text === undefined) return [];
  return text.split(',').map((entry) => {
    const trimmed = entry.trim();
    const [address = '', prefix, extra] = trimmed.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (!PROXY_RANGES.includes(trimmed) && (family === 0 || !validPrefix || extra !== undefined)) {
      throw new ConfigError(
        `TRUST_PROXY must be a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.5,10.1.0.0/16), or ${PROXY_RANGES.join(', ')}; got "${trimmed}"`,
      );
    }
    return trimmed;
  });
}
