import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import { nonEmpty, parseInteger } from './values.js';

interface SqliteDatabaseConfig {
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

const DEFAULT_DATABASE_PATH = 'data/petstore.db';

/**
 * A scheme (`name:`), or a database scheme that lost its colon (`postgres//…`): a URL, never a file path.
 * Taken as a path, a mistyped PostgreSQL URL would quietly become a new SQLite file.
 */
const URL_LIKE = /^(?:[a-z][a-z0-9+.-]*:|(?:postgres(?:ql)?|sqlite)\/\/)/i;

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
  if (!text.startsWith('sqlite:') && URL_LIKE.test(text)) {
    // The value is not echoed: a URL may carry a password.
    throw new ConfigError(
      'DATABASE_URL looks like a URL but is not postgres://… or sqlite:…; a file path has no scheme (./NAME for a name with a colon)',
    );
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
