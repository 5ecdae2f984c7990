import type { Database } from './postgres-db.js';

/** Deliveries recorded between two vacuums: the dead index entries a claim may walk, at most, about. */
const RECORDED_PER_VACUUM = 2_000;
/** The least time between two vacuums, and how many times the last one's duration: at most 5 % spent on it. */
const MIN_GAP_MS = 1_000;
const GAP_PER_DURATION = 20;

/**
 * Whether this database user may vacuum the table (its owner's privileges, or the database's owner's, as
 * VACUUM asks): under a least-privilege user that may not, a VACUUM only warns, so it is not sent at all.
 */
const MAY_VACUUM = `SELECT pg_has_role(c.relowner, 'USAGE')
    OR pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE') AS may
  FROM pg_class c WHERE c.oid = to_regclass('webhook_deliveries')`;

/**
 * Vacuums webhook_deliveries as deliveries are recorded, instead of waiting for autovacuum (at most once a
 * minute by default). Recording an attempt leaves the row's pending version behind in the claim's index
 * (webhook_deliveries_due), and a claim walks those dead entries ahead of the live ones until a vacuum
 * removes them: measured over a drain of 60,000 deliveries, each claim read about 3,000 of them, and claims
 * and records took 4–7 ms a statement instead of about 1 (docs/decisions/deliveries-vacuumed.md). ANALYZE
 * with it: the statistics of a table that grew from nothing within the minute misled the planner once the
 * vacuum had updated its size, and fan-out's probe for a subject's earlier delivery read the wrong index
 * (1.6 s a step instead of 7 ms). Each instance counts what it recorded; SKIP_LOCKED leaves the table to a
 * vacuum already running (another instance's, or autovacuum's) rather than waiting for it. A failed vacuum is
 * only tried again later: the table works without one, more slowly.
 */
export class DeliveriesVacuum {
  readonly #db: Database;
  readonly #now: () => number;
  #recorded = 0;
  #running = false;
  #notBefore = 0;
  /** Unknown until the first vacuum is due. */
  #allowed: boolean | undefined;

  constructor(db: Database, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /**
   * `count` more deliveries were recorded: a vacuum starts in the background once enough were. Returns it
   * when one started (it never rejects), for a caller that waits for it; the store does not.
   */
  recorded(count: number): Promise<void> | undefined {
    this.#recorded += count;
    if (this.#recorded < RECORDED_PER_VACUUM || this.#running || this.#allowed === false) return undefined;
    if (this.#now() < this.#notBefore) return undefined;
    this.#running = true;
    this.#recorded = 0;
    return this.#vacuum().finally(() => {
      this.#running = false;
    });
  }

  async #vacuum(): Promise<void> {
    const started = this.#now();
    try {
      this.#allowed ??= (await this.#db.rows<{ may: boolean }>('deliveries-may-vacuum', MAY_VACUUM, []))[0]?.may;
      if (this.#allowed !== true) return;
      await this.#db.rows('deliveries-vacuum', 'VACUUM (ANALYZE, SKIP_LOCKED) webhook_deliveries', []);
    } catch {
      // An outage, or the store closing: the next count tries again.
    } finally {
      const took = this.#now() - started;
      this.#notBefore = this.#now() + Math.max(MIN_GAP_MS, GAP_PER_DURATION * took);
    }
  }
}
