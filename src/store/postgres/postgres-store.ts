import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { PostgresDatabaseConfig } from '../../config/database-url.js';
import { type ChangeTrace, NO_TRACE } from '../change-trace.js';
import { SharedTokenRead } from '../shared/shared-token-read.js';
import type {
  ApiKeyStore,
  AuditLogStore,
  DeliveryStore,
  EndpointStartStore,
  EventStore,
  OrderStore,
  PetStore,
  PoolStats,
  RedeliveryStore,
  Store,
  WebhookStore,
} from '../store.js';
import { PostgresApiKeyStore } from './api-keys.js';
import { PostgresAuditLog } from './audit-log.js';
import { createPool, migrateOnce } from './connections.js';
import { PostgresDeliveryStore } from './deliveries.js';
import { PostgresEndpointStartStore } from './endpoint-starts.js';
import { PostgresEventStore } from './events.js';
import { PostgresFanOut } from './fan-out.js';
import { purgeExpiredOnce } from './idempotency.js';
import { PostgresOrderStore } from './orders.js';
import { PostgresPetStore } from './pets.js';
import { Database } from './postgres-db.js';
import { PostgresRedeliveryStore } from './redeliveries.js';
import { PostgresWebhookStore } from './webhooks.js';

/** How long closing waits for the database to acknowledge. */
const CLOSE_WAIT_MS = 2000;

const CURRENT_SNAPSHOT = 'SELECT pg_current_snapshot()::text AS snapshot';

/**
 * The production store: PostgreSQL through a node-postgres pool (see createPool), shared by any number
 * of instances. The entity stores share the pool.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly pets: PetStore;
  readonly orders: OrderStore;
  readonly apiKeys: ApiKeyStore;
  readonly events: EventStore;
  readonly webhooks: WebhookStore;
  readonly deliveries: DeliveryStore;
  readonly redeliveries: RedeliveryStore;
  readonly endpointStarts: EndpointStartStore;
  readonly audit: AuditLogStore;
  readonly #pool: pg.Pool;
  readonly #db: Database;
  readonly #snapshots: SharedTokenRead;

  private constructor(pool: pg.Pool, config: PostgresDatabaseConfig, trace: ChangeTrace) {
    this.#pool = pool;
    const db = new Database(pool);
    this.#db = db;
    this.#snapshots = new SharedTokenRead(async () => {
      const [row] = await db.rows<{ snapshot: string }>('current-snapshot', CURRENT_SNAPSHOT, []);
      return (row as { snapshot: string }).snapshot;
    });
    this.pets = new PostgresPetStore(db, trace);
    this.orders = new PostgresOrderStore(db, trace);
    this.apiKeys = new PostgresApiKeyStore(db);
    this.events = new PostgresEventStore(db, config);
    const fanOut = new PostgresFanOut(db);
    this.webhooks = new PostgresWebhookStore(db, fanOut);
    this.deliveries = new PostgresDeliveryStore(db, fanOut);
    this.redeliveries = new PostgresRedeliveryStore(db);
    this.endpointStarts = new PostgresEndpointStartStore(db);
    this.audit = new PostgresAuditLog(db);
  }

  /**
   * Connects, and brings the schema up to date. `trace`: what a change's events record of the trace it is
   * made in (nothing by default).
   */
  static async open(config: PostgresDatabaseConfig, trace: ChangeTrace = NO_TRACE): Promise<PostgresStore> {
    const pool = createPool(config);
    try {
      await migrateOnce(config);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresStore(pool, config, trace);
  }

  async secret(name: string): Promise<Buffer> {
    await this.#db.rows(
      'secrets-insert',
      'INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
      [name, randomBytes(32)],
    );
    const [row] = await this.#db.rows<{ value: Buffer }>('secrets-get', 'SELECT value FROM secrets WHERE name = $1', [
      name,
    ]);
    return (row as { value: Buffer }).value;
  }

  purgeExpiredIdempotencyKeys(now: Date): Promise<number> {
    return purgeExpiredOnce(this.#db, now);
  }

  async ping(): Promise<void> {
    await this.#db.rows('ping', 'SELECT 1', []);
  }

  /**
   * The snapshot a new statement gets (`pg_current_snapshot()`, PostgreSQL 13+), which names exactly the
   * set of transactions visible to it: the same text, the same data. Every commit or abort by any instance
   * changes it, and a write is visible to new snapshots before its client is answered. One query serves
   * every request that asked meanwhile (SharedTokenRead).
   */
  changeToken(): Promise<string> {
    return this.#snapshots.read();
  }

  poolStats(): PoolStats {
    const pool = this.#pool;
    return { open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max };
  }

  async close(): Promise<void> {
    if (this.#pool.ended) return;
    // pool.end() waits for each server's goodbye, which a frozen server never sends: bound the wait.
    await Promise.race([this.#pool.end(), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }
}
