import pg from 'pg';
import type { PostgresDatabaseConfig } from '../../config/database-url.js';
import { migratePostgres } from './postgres-migrate.js';

/** BIGINT arrives as text; the service's values stay below 2^53, and anything else is refused, not rounded. */
const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === pg.types.builtins.INT8) {
      return (text: string) => {
        const value = Number(text);
        if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is beyond 2^53 - 1`);
        return value;
      };
    }
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * How long the server lets a session of ours sit idle inside a transaction before ending it, which rolls
 * the transaction back and frees its locks. Inside a transaction the service waits on nothing but the
 * database, so only a process that stopped (SIGSTOP, a long pause, a lost network) idles this long; the
 * id-order locks it holds would otherwise stop every instance's writes for as long as it stays stopped.
 */
const IDLE_IN_TRANSACTION_MS = 1000;

/**
 * The request pool. Connect and query time-outs are bounded, so an unreachable database yields
 * StoreUnavailableError (503) quickly, and the pool reconnects by itself when the database returns.
 */
export function createPool(config: PostgresDatabaseConfig): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    connectionTimeoutMillis: config.connectTimeoutMs,
    query_timeout: config.queryTimeoutMs,
    statement_timeout: config.queryTimeoutMs,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // Idle connections must not keep a stopping process alive (they may wait on a frozen server).
    allowExitOnIdle: true,
    types: typeParsers,
    application_name: 'petstore',
  });
  // An idle connection dropped by the server is removed by the pool; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Migrations get a connection of their own, without the request time-outs: waiting for another
 * instance's migration lock, or building an index on a large table, may take longer than any request
 * should. The connection is closed afterwards, so no setting leaks into the pool. Returns the versions applied.
 */
export async function migrateOnce(config: PostgresDatabaseConfig): Promise<number[]> {
  const client = new pg.Client({
    connectionString: config.url,
    connectionTimeoutMillis: config.connectTimeoutMs,
    types: typeParsers,
    application_name: 'petstore-migrate',
  });
  // Without a listener, a connection dropped during the migration would end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SET statement_timeout = 0');
    return await migratePostgres(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
