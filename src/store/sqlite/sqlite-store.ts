import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
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
  RedeliveryStore,
  Store,
  WebhookStore,
} from '../store.js';
import { SqliteApiKeyStore } from './api-keys.js';
import { SqliteAuditLog } from './audit-log.js';
import { changeTokenReader } from './change-token.js';
import { SqliteDeliveryStore } from './deliveries.js';
import { SqliteEndpointHealth } from './endpoint-health.js';
import { SqliteEndpointStartStore } from './endpoint-starts.js';
import { SqliteEventStore } from './events.js';
import { SqliteFanOut } from './fan-out.js';
import { GroupCommit } from './group-commit.js';
import { SqliteIdempotencyKeys } from './idempotency.js';
import { openDatabase } from './open-database.js';
import { SqliteOrderStore } from './orders.js';
import { SqliteOutbox } from './outbox.js';
import { SqlitePetStore } from './pets.js';
import { SqliteRedeliveryStore } from './redeliveries.js';
import { shrinkSwollenWal } from './wal-shrink.js';
import { SqliteWebhookStore } from './webhooks.js';
import type { WriteTurns } from './write-turns.js';

/**
 * The embedded store: one SQLite file (see openDatabase). better-sqlite3 is synchronous; each call is
 * short and indexed. The entity stores share one connection and one group commit, which every write goes
 * through, so none waits on another process's lock with the event loop blocked.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly pets: PetStore;
  readonly orders: OrderStore;
  readonly apiKeys: ApiKeyStore;
  readonly events: EventStore;
  readonly webhooks: WebhookStore;
  readonly deliveries: DeliveryStore;
  readonly redeliveries: RedeliveryStore;
  readonly endpointStarts: EndpointStartStore;
  readonly audit: AuditLogStore;
  readonly #db: Database.Database;
  readonly #idempotencyKeys: SqliteIdempotencyKeys;
  readonly #tokens: SharedTokenRead;
  readonly #writes: GroupCommit;
  readonly #stopWalChecks: () => void;

  private constructor(db: Database.Database, turns: WriteTurns | undefined, trace: ChangeTrace) {
    this.#db = db;
    this.#tokens = new SharedTokenRead(changeTokenReader(db));
    this.#idempotencyKeys = new SqliteIdempotencyKeys(db);
    this.#writes = new GroupCommit(db, { turns, keepContext: trace !== NO_TRACE });
    const outbox = new SqliteOutbox(db, trace);
    const audit = new SqliteAuditLog(db, this.#writes);
    this.audit = audit;
    this.pets = new SqlitePetStore(db, this.#idempotencyKeys.runOnce, this.#writes, outbox);
    this.orders = new SqliteOrderStore(db, this.#idempotencyKeys.runOnce, this.#writes, outbox);
    this.events = new SqliteEventStore(db, this.#writes);
    this.apiKeys = new SqliteApiKeyStore(db, this.#writes, audit);
    const fanOut = new SqliteFanOut(db);
    this.webhooks = new SqliteWebhookStore(db, this.#writes, fanOut, audit);
    const health = new SqliteEndpointHealth(db, outbox, audit);
    this.deliveries = new SqliteDeliveryStore(db, this.#writes, fanOut, health);
    this.redeliveries = new SqliteRedeliveryStore(db, this.#writes);
    this.endpointStarts = new SqliteEndpointStartStore(db, this.#writes);
    this.#stopWalChecks = shrinkSwollenWal(db);
  }

  /**
   * Opens (creating if needed) the database file and brings its schema up to date. `turns`: the processes
   * sharing the file take turns to write (serve --workers N). `trace`: what a change's events record of the
   * trace it is made in (nothing by default).
   */
  static open(path: string, turns?: WriteTurns, trace: ChangeTrace = NO_TRACE): SqliteStore {
    const db = openDatabase(path);
    try {
      return new SqliteStore(db, turns, trace);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async secret(name: string): Promise<Buffer> {
    const read = this.#db.prepare<[string], { value: Buffer }>('SELECT value FROM secrets WHERE name = ?');
    const existing = read.get(name);
    if (existing !== undefined) return existing.value;
    return this.#writes.run(() => {
      this.#db.prepare('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)').run(name, randomBytes(32));
      return (read.get(name) as { value: Buffer }).value;
    });
  }

  purgeExpiredIdempotencyKeys(now: Date): Promise<number> {
    return this.#writes.run(() => this.#idempotencyKeys.purgeExpired(now));
  }

  /**
   * Changes with every commit by any connection, this one or another process's (see changeTokenReader).
   * One read serves every request of an event-loop turn (SharedTokenRead).
   */
  changeToken(): Promise<string> {
    return this.#tokens.read();
  }

  poolStats(): undefined {
    return undefined;
  }

  async ping(): Promise<void> {
    this.#db.prepare('SELECT 1').get();
    // Not ready while the disk is full, and ready again as soon as a write (one page) commits.
    if (this.#writes.trouble.diskFull) {
      await this.#writes.run(() => {
        const version = this.#db.pragma('user_version', { simple: true }) as number;
        this.#db.pragma(`user_version = ${version}`);
      });
    }
  }

  async close(): Promise<void> {
    this.#stopWalChecks();
    if (!this.#db.open) return;
    this.#db.close();
  }
}
