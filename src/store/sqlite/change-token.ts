import type Database from 'better-sqlite3';
import { StoreUnavailableError } from '../store-errors.js';

/**
 * Reads a value that changes with every commit to the database, by any connection (see Store.changeToken).
 * `PRAGMA data_version` changes when another connection, in this process or another, has committed since
 * this connection last looked (a checkpoint may change it too, which only costs a cache miss);
 * `total_changes()` counts the rows this connection's own statements wrote, which data_version does not
 * see. The two run back to back in one synchronous call, so no commit of this connection falls between
 * them, and data_version takes the WAL read lock: a read started afterwards sees that state or a newer one.
 * Two plain statements rather than one over `pragma_data_version`: 3.3 µs a read against 4.7 µs, measured alone.
 */
export function changeTokenReader(db: Database.Database): () => string {
  const version = db.prepare<[], number>('PRAGMA data_version').pluck();
  const ownChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
  return () => {
    // A read queued before the store closed runs after it: the store is gone, not broken.
    if (!db.open) throw new StoreUnavailableError(new Error('the store is closed'));
    return `${version.get()}.${ownChanges.get()}`;
  };
}
