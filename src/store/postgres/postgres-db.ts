import type pg from 'pg';
import { StoreUnavailableError } from '../store-errors.js';
import { isDeadlock, translatePgError } from './postgres-errors.js';

/**
 * Times a statement on its own, or a transaction of SQL alone that asks for it, is run again after being a
 * deadlock's victim (e.g. a resend meeting the attempt of the same delivery being recorded), before the
 * error is the caller's.
 */
const DEADLOCK_RETRIES = 2;

/** The pool, with every failure translated: database outages become StoreUnavailableError. */
export class Database {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * One statement, prepared per connection under `name`; database outages become StoreUnavailableError. A
   * deadlock's victim runs again (DEADLOCK_RETRIES).
   */
  async rows<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[], keyName?: string) {
    return (await this.#query<R>(name, text, values, keyName)).rows;
  }

  /** One statement, as rows(); resolves with how many rows it wrote. */
  async count(name: string, text: string, values: unknown[]): Promise<number> {
    return (await this.#query(name, text, values)).rowCount ?? 0;
  }

  async #query<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[], keyName?: string) {
    for (let retry = 0; ; retry++) {
      try {
        return await this.#pool.query<R>({ name, text, values });
      } catch (error) {
        if (isDeadlock(error) && retry < DEADLOCK_RETRIES) continue;
        throw translatePgError(error, keyName === undefined ? {} : { keyName });
      }
    }
  }

  /**
   * Runs `work` in one transaction on one connection. When it fails for an outage (a time-out, a dropped
   * connection, a lock held too long) the connection is closed instead of rolled back: the server rolls
   * back a transaction whose connection ends, and a ROLLBACK on a connection that did not answer would
   * wait for a second time-out before the request could answer 503.
   */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        return await this.#transactionOnce(work, options);
      } catch (error) {
        if (options.rerunDeadlock === true && isDeadlock(error) && retry < DEADLOCK_RETRIES) continue;
        throw error;
      }
    }
  }

  async #transactionOnce<T>(work: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translatePgError(error);
    }
    // pg-pool stops listening for a checked-out client's errors; without a listener, a connection
    // dropped mid-transaction would be an unhandled 'error' event and end the process.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      const bounded = options.lockTimeoutMs === undefined ? [] : [`lock_timeout = ${options.lockTimeoutMs}`];
      const settings = [...bounded, ...(options.settings ?? [])].map((setting) => `; SET LOCAL ${setting}`);
      await client.query(`BEGIN${settings.join('')}`);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      const translated = translatePgError(error, options.keyName === undefined ? {} : { keyName: options.keyName });
      if (translated instanceof StoreUnavailableError) {
        broken ??= translated;
      } else {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken ??= rollbackError;
        });
      }
      throw translated;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }
}

export interface TransactionOptions {
  /** The key name a unique violation is about: it becomes DuplicateNameError. */
  readonly keyName?: string;
  /** Bounds each lock wait (lock_timeout); past it the transaction fails with StoreUnavailableError. */
  readonly lockTimeoutMs?: number;
  /** Settings for this transaction only (`name = value`), sent with its BEGIN: no extra round trip. */
  readonly settings?: readonly string[];
  /**
   * The work is SQL alone, so a deadlock's victim runs again as a whole (DEADLOCK_RETRIES): the server rolled
   * all of it back, and running it again is as if it had come a moment later.
   */
  readonly rerunDeadlock?: boolean;
}
