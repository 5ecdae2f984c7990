import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface TlsFiles {
  readonly certPath: string;
  readonly keyPath: string;
}

// Parsers of single settings, for loadConfig: each error names the variable and what it takes.

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function parsePort(text: string | undefined): number {
  if (text === undefined) return 8080;
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${text}"`);
  }
  return port;
}

export function parseInteger(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

export function parsePublicUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${text}"`);
  }
  if (url.search !== '' || url.hash !== '') throw new ConfigError('PUBLIC_URL must not have a query or fragment');
  // Links add /v1 themselves: one that ends the URL (as the OpenAPI servers URL does) would double it.
  return url.href.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export function parseLogLevel(text: string | undefined): LogLevel {
  if (text === undefined) return 'info';
  const level = text.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(level))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${text}"`);
  return level;
}

export function parseTls(cert: string | undefined, key: string | undefined): TlsFiles | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) throw new ConfigError('TLS_CERT and TLS_KEY must be set together');
  return { certPath: resolve(cert), keyPath: resolve(key) };
}

export function parseRateLimit(rps: string | undefined, burst: string | undefined) {
  const perSecond = rps === undefined ? 100 : Number(rps);
  if (!/^\d+(\.\d+)?$/.test(rps ?? '100') || !Number.isFinite(perSecond)) {
    throw new ConfigError(
      `RATE_LIMIT_RPS must be a number of requests per second (0 turns the per-key limit off), got "${rps}"`,
    );
  }
  if (perSecond === 0) return undefined;
  return { perSecond, burst: parseInteger('RATE_LIMIT_BURST', burst, 200, 1, 1_000_000) };
}

export function parseRedisUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^rediss?:\/\//.test(text)) throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  return text;
}

export function parseSwitch(name: string, text: string | undefined, fallback: boolean): boolean {
  if (text === undefined) return fallback;
  if (text === 'on' || text === 'off') return text === 'on';
  throw new ConfigError(`${name} must be "on" or "off", got "${text}"`);
}

/** Exactly `true` or `false`: a typo stops the start rather than leaving the default in force. */
export function parseBoolean(name: string, text: string | undefined, fallback: boolean): boolean {
  if (text === undefined) return fallback;
  if (text === 'true' || text === 'false') return text === 'true';
  throw new ConfigError(`${name} must be "true" or "false", got "${text}"`);
}
