import type Database from 'better-sqlite3';
import { StoreFullError, StoreUnavailableError } from '../store-errors.js';

type Kind = 'full' | 'busy' | 'closed';

function kindOf(db: Database.Database, error: unknown): Kind | undefined {
  if (!db.open) return 'closed';
  const code = String((error as { code?: unknown }).code);
  if (code === 'SQLITE_FULL') return 'full';
  if (code.startsWith('SQLITE_BUSY')) return 'busy';
  return undefined;
}

/**
 * What a failed write means for the service. A full disk, another process holding the write lock too long
 * and a closed store are not bugs: they become the store's 503 errors, and the first of a run of them
 * (an episode, ended by the next commit) is the one reported. Anything else stays what it is (a 500).
 */
export class WriteTrouble {
  readonly #db: Database.Database;
  #current: Kind | undefined;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  /** Whether the last write failed because the disk is full (and none has committed since). */
  get diskFull(): boolean {
    return this.#current === 'full';
  }

  /** The error to answer for a write that failed with `error`. */
  failed(error: unknown): unknown {
    const kind = kindOf(this.#db, error);
    if (kind === undefined) return error;
    const first = this.#current !== kind;
    this.#current = kind;
    return kind === 'full' ? new StoreFullError(error, first) : new StoreUnavailableError(error, first);
  }

  committed(): void {
    this.#current = undefined;
  }
}
