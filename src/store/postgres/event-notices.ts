import pg from 'pg';
import type { PostgresDatabaseConfig } from '../../config/database-url.js';

/** The channel the events table's trigger notifies (events_notify), with the schema it wrote in as payload. */
const EVENTS_CHANNEL = 'petstore_events';
/** Waits between reconnection attempts: doubling from the first, never above the last. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/**
 * Calls `onNotice` when a transaction that recorded events in this connection's schema commits, on any
 * instance, through a connection of its own that LISTENs (the pool's connections come and go). A dropped
 * connection is opened again after a growing wait, and `onNotice` is called on each (re)connection, since
 * notices sent meanwhile are lost. While it is down the caller's poll of the head is the only watch.
 * Returns the stop.
 */
export function listenForEvents(config: PostgresDatabaseConfig, onNotice: () => void): () => void {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let wait = RECONNECT_FIRST_MS;

  const reconnectLater = () => {
    if (stopped || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, wait);
    retry.unref();
    wait = Math.min(wait * 2, RECONNECT_MAX_MS);
  };

  const connect = async () => {
    const connection = new pg.Client({
      connectionString: config.url,
      connectionTimeoutMillis: config.connectTimeoutMs,
      query_timeout: config.queryTimeoutMs,
      keepAlive: true,
      application_name: 'petstore-listen',
    });
    client = connection;
    let dropped = false;
    const drop = () => {
      if (dropped) return;
      dropped = true;
      connection.end().catch(() => undefined);
      reconnectLater();
    };
    // Without a listener, a dropped connection would end the process.
    connection.on('error', drop);
    connection.on('end', drop);
    try {
      await connection.connect();
      const { rows } = await connection.query<{ schema: string }>('SELECT current_schema() AS schema');
      const schema = rows[0]?.schema;
      connection.on('notification', (notice) => {
        if (notice.channel === EVENTS_CHANNEL && notice.payload === schema) onNotice();
      });
      await connection.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch {
      drop();
      return;
    }
    if (stopped || dropped) return;
    wait = RECONNECT_FIRST_MS;
    onNotice();
  };

  void connect();
  return () => {
    stopped = true;
    clearTimeout(retry);
    client?.end().catch(() => undefined);
  };
}
