import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The two copies of the wal-index header at the start of the `-shm` file (https://sqlite.org/walformat.html,
 * "The WAL-Index Header"): 48 bytes each.
 */
const HEADER_BYTES = 96;

/**
 * Tells whether any connection, in this process or another, has committed to a SQLite database in WAL
 * mode since the last look, without taking a lock: it reads the wal-index header from the `-shm` file.
 * Every commit rewrites that header before it returns (the WAL's frame count grows, or a restarted WAL
 * gets a new salt), both copies, so a header byte-identical to the last one read means no commit since.
 * A read that overlaps a commit sees changed bytes or the old ones, both right for a read running
 * alongside that commit. `PRAGMA data_version` answers the same question but takes the WAL read lock
 * (four fcntl calls); this is one pread. The `-shm` file stays while a connection is open, and the
 * store's own connection is open for as long as this is used.
 */
export class WalIndexWatch {
  readonly #fd: number;
  readonly #read = Buffer.alloc(HEADER_BYTES);
  readonly #seen = Buffer.alloc(HEADER_BYTES);
  #generation = 0;
  #token = '0';

  /** Opens the `-shm` file of the database at `databasePath`, which must be open in WAL mode. */
  constructor(databasePath: string) {
    this.#fd = openSync(`${databasePath}-shm`, 'r');
  }

  /** Changes whenever a commit happened since the previous call; unchanged otherwise. */
  token(): string {
    const length = readSync(this.#fd, this.#read, 0, HEADER_BYTES, 0);
    // A short read (a header not written yet) never counts as unchanged.
    if (length !== HEADER_BYTES || !this.#read.equals(this.#seen)) {
      this.#read.copy(this.#seen);
      this.#generation += 1;
      this.#token = String(this.#generation);
    }
    return this.#token;
  }

  close(): void {
    closeSync(this.#fd);
  }
}
