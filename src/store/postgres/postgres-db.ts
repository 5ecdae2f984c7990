import type pg from 'pg';
import { translatePgError } from './postgres-errors.js';

/** Advisory lock keys are per schema, so separate deployments (and test schemas) never contend. */
export const lockKey = (name: string) => `hashtext(coalesce(current_schema(), '') || '.petstore.${name}')`;

/** The pool, with every failure translated: database outages become StoreUnavailableError. */
export class Database {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** One statement, prepared per connection under `name`; database outages become StoreUnavailableError. */
  async rows<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[], keyName?: string) {
    try {
      return (await this.#pool.query<R>({ name, text, values })).rows;
    } catch (error) {
      throw translatePgError(error, keyName === undefined ? {} : { keyName });
    }
  }

  /** Runs `work` in one transaction on one connection. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, keyName?: string): Promise<T> {
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
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken ??= rollbackError;
      });
      throw translatePgError(error, keyName === undefined ? {} : { keyName });
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }
}
