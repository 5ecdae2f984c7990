import { isIP } from 'node:net';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';

export interface SqliteDatabaseConfig {
  readonly kind: 'sqlite';
  readonly path: string;
}

export interface PostgresDatabaseConfig {
  readonly kind: 'postgres';
  readonly url: string;
  /** Pool size per process. */
  readonly poolSize: number;
  /** Bound on opening a connection; past it the request answers 503. */
  readonly connectTimeoutMs: number;
  /** Bound on one query (client side, and statement_timeout on the server). */
  readonly queryTimeoutMs: number;
}

export type DatabaseConfig = SqliteDatabaseConfig | PostgresDatabaseConfig;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Everything the service reads from its environment, read once at start and passed down. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly database: DatabaseConfig;
  /** Origin (and optional path prefix) in front of `/v1` in absolute links; relative links when absent. */
  readonly publicUrl: string | undefined;
  readonly logLevel: LogLevel;
  /** Per API key; undefined when RATE_LIMIT_RPS=0 turns it off. */
  readonly rateLimit: { readonly perSecond: number; readonly burst: number } | undefined;
  /** Failed authentications per client address; a setting of its own, so RATE_LIMIT_RPS=0 keeps it on. */
  readonly authFailureLimit: boolean;
  /** Proxies (addresses, CIDRs) whose X-Forwarded-For names the client; none when empty. */
  readonly trustProxy: readonly string[];
  /** Redis for state shared by instances (rate limits); per process when absent. */
  readonly redisUrl: string | undefined;
  /** PEM files for HTTPS (HTTP/2 with HTTP/1.1 fallback); plain HTTP when absent. */
  readonly tls: TlsFiles | undefined;
  /** Connections one client address may hold open; behind a proxy every client shares the proxy's. */
  readonly maxConnectionsPerAddress: number;
  /** Days events stay in the feed (EVENT_RETENTION_DAYS); older ones are removed, with their deliveries. */
  readonly eventRetentionDays: number;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: webhooks may point to any address, and use http:// (internal networks, tests). */
  readonly webhookAllowPrivateUrls: boolean;
  /** How long one webhook attempt may take in all (WEBHOOK_TIMEOUT_MS): resolving, connecting, answering. */
  readonly webhookTimeoutMs: number;
  /** The delays before each retry of a failed delivery, in ms (WEBHOOK_RETRY_SCHEDULE); then it has failed. */
  readonly webhookRetrySchedule: readonly number[];
}

export interface TlsFiles {
  readonly certPath: string;
  readonly keyPath: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_DATABASE_PATH = 'data/petstore.db';
export const DEFAULT_EVENT_RETENTION_DAYS = 30;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return 8080;
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${text}"`);
  }
  return port;
}

function parseInteger(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

export function parseDatabaseUrl(text: string | undefined, env: NodeJS.ProcessEnv = {}): DatabaseConfig {
  if (text === undefined) return { kind: 'sqlite', path: resolve(DEFAULT_DATABASE_PATH) };
  if (/^postgres(ql)?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    }
    // As libpq does: no user in the URL means PGUSER, else the operating-system user.
    if (url.username === '') url.username = encodeURIComponent(env.PGUSER ?? userInfo().username);
    return {
      kind: 'postgres',
      url: url.href,
      poolSize: parseInteger('DATABASE_POOL_SIZE', nonEmpty(env.DATABASE_POOL_SIZE), 10, 1, 1000),
      connectTimeoutMs: parseInteger(
        'DATABASE_CONNECT_TIMEOUT_MS',
        nonEmpty(env.DATABASE_CONNECT_TIMEOUT_MS),
        3000,
        100,
        600_000,
      ),
      queryTimeoutMs: parseInteger(
        'DATABASE_QUERY_TIMEOUT_MS',
        nonEmpty(env.DATABASE_QUERY_TIMEOUT_MS),
        5000,
        100,
        600_000,
      ),
    };
  }
  let path = text;
  if (text.startsWith('sqlite:')) {
    path = text.slice('sqlite:'.length);
    // sqlite:///abs/path is absolute; sqlite://x/… would name a host, which a file has not.
    if (path.startsWith('//')) {
      if (!path.startsWith('///')) {
        throw new ConfigError('DATABASE_URL: write sqlite:relative/path or sqlite:///absolute/path');
      }
      path = path.slice(2);
    }
  }
  if (path === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    // The value is not echoed: a URL may carry a password.
    throw new ConfigError('DATABASE_URL must be postgres://…, sqlite:PATH or a file path');
  }
  return { kind: 'sqlite', path: resolve(path) };
}

function parsePublicUrl(text: string | undefined): string | undefined {
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

function parseLogLevel(text: string | undefined): LogLevel {
  if (text === undefined) return 'info';
  const level = text.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

function parseTls(cert: string | undefined, key: string | undefined): TlsFiles | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) throw new ConfigError('TLS_CERT and TLS_KEY must be set together');
  return { certPath: resolve(cert), keyPath: resolve(key) };
}

function parseRateLimit(rps: string | undefined, burst: string | undefined) {
  const perSecond = rps === undefined ? 100 : Number(rps);
  if (!/^\d+(\.\d+)?$/.test(rps ?? '100') || !Number.isFinite(perSecond)) {
    throw new ConfigError(
      `RATE_LIMIT_RPS must be a number of requests per second (0 turns the per-key limit off), got "${rps}"`,
    );
  }
  if (perSecond === 0) return undefined;
  return { perSecond, burst: parseInteger('RATE_LIMIT_BURST', burst, 200, 1, 1_000_000) };
}

function parseRedisUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^rediss?:\/\//.test(text)) throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  return text;
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';
/** Longer waits would outlive the events they deliver (EVENT_RETENTION_DAYS' default). */
const MAX_RETRY_DELAY_MS = 30 * 86_400_000;
const MAX_RETRIES = 50;

/** `5s,5m,30m`: delays with a unit (ms, s, m, h, d), in milliseconds. */
function parseRetrySchedule(text: string): readonly number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > MAX_RETRIES) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE has at most ${MAX_RETRIES} delays, got ${entries.length}`);
  }
  return entries.map((entry) => {
    const [, amount = '', unit = ''] = /^(\d+)(ms|s|m|h|d)$/.exec(entry) ?? [];
    const delay = Number(amount) * (DURATION_UNITS_MS[unit] ?? Number.NaN);
    if (!(delay >= 1 && delay <= MAX_RETRY_DELAY_MS)) {
      throw new ConfigError(
        `WEBHOOK_RETRY_SCHEDULE must be comma-separated delays from 1ms to 30d, each a number and a unit ` +
          `(ms, s, m, h, d), e.g. ${DEFAULT_RETRY_SCHEDULE}; got "${entry}"`,
      );
    }
    return delay;
  });
}

function parseSwitch(name: string, text: string | undefined, fallback: boolean): boolean {
  if (text === undefined) return fallback;
  if (text === 'on' || text === 'off') return text === 'on';
  throw new ConfigError(`${name} must be "on" or "off", got "${text}"`);
}

/** Exactly `true` or `false`: a typo stops the start rather than leaving the default in force. */
function parseBoolean(name: string, text: string | undefined, fallback: boolean): boolean {
  if (text === undefined) return fallback;
  if (text === 'true' || text === 'false') return text === 'true';
  throw new ConfigError(`${name} must be "true" or "false", got "${text}"`);
}

/** Names Fastify (proxy-addr) gives to address ranges, e.g. `loopback` for a proxy on the same machine. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** Checked here, so a typo stops the start naming the entry instead of failing inside Fastify. */
function parseTrustProxy(text: string | undefined): readonly string[] {
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

/** Reads and validates the environment. The only place in the service that looks at process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port: parsePort(nonEmpty(env.PORT)),
    database: parseDatabaseUrl(nonEmpty(env.DATABASE_URL), env),
    publicUrl: parsePublicUrl(nonEmpty(env.PUBLIC_URL)),
    logLevel: parseLogLevel(nonEmpty(env.LOG_LEVEL)),
    tls: parseTls(nonEmpty(env.TLS_CERT), nonEmpty(env.TLS_KEY)),
    rateLimit: parseRateLimit(nonEmpty(env.RATE_LIMIT_RPS), nonEmpty(env.RATE_LIMIT_BURST)),
    authFailureLimit: parseSwitch('AUTH_FAILURE_LIMIT', nonEmpty(env.AUTH_FAILURE_LIMIT), true),
    trustProxy: parseTrustProxy(nonEmpty(env.TRUST_PROXY)),
    redisUrl: parseRedisUrl(nonEmpty(env.REDIS_URL)),
    webhookAllowPrivateUrls: parseBoolean(
      'WEBHOOK_ALLOW_PRIVATE_URLS',
      nonEmpty(env.WEBHOOK_ALLOW_PRIVATE_URLS),
      false,
    ),
    // Up to the process's 10 000 connections, which turns the per-address bound off.
    maxConnectionsPerAddress: parseInteger(
      'MAX_CONNECTIONS_PER_ADDRESS',
      nonEmpty(env.MAX_CONNECTIONS_PER_ADDRESS),
      1000,
      1,
      10_000,
    ),
    eventRetentionDays: parseInteger(
      'EVENT_RETENTION_DAYS',
      nonEmpty(env.EVENT_RETENTION_DAYS),
      DEFAULT_EVENT_RETENTION_DAYS,
      1,
      3650,
    ),
    webhookTimeoutMs: parseInteger('WEBHOOK_TIMEOUT_MS', nonEmpty(env.WEBHOOK_TIMEOUT_MS), 10_000, 100, 600_000),
    webhookRetrySchedule: parseRetrySchedule(nonEmpty(env.WEBHOOK_RETRY_SCHEDULE) ?? DEFAULT_RETRY_SCHEDULE),
  };
}
