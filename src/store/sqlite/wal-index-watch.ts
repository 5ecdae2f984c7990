import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import { StoreUnavailableError } from '../store.js';

/**
 * The two copies of the wal-index header at the start of the `-shm` file (https://sqlite.org/walformat.html,
 * "The WAL-Index Header"): 48 bytes each.
 */
const HEADER_BYTES = 96;
const COPY_BYTES = 48;
/** iVersion, the first field of each copy (in the machine's byte order): the only wal-index format there is. */
const WAL_INDEX_VERSION = 3007000;
/** isInit, at byte 12 of each copy: 1 once the header is written. */
const IS_INIT_OFFSET = 12;

/** One open `-shm` file per file identity in this process, shared by every store on that database. */
interface ShmFile {
  readonly fd: number;
  users: number;
}
const shmFiles = new Map<string, ShmFile>();

/**
 * Opens the `-shm` file, or shares the descriptor another store of this process holds on it. POSIX record
 * locks belong to the process and the file: closing any descriptor of a file drops every lock the process
 * holds on it, SQLite's own included. So this process opens it once, and closes it only when the last
 * store using it has closed its connection.
 */
function acquire(shmPath: string): { key: string; file: ShmFile } {
  const { dev, ino } = statSync(shmPath);
  const key = `${dev}:${ino}`;
  let file = shmFiles.get(key);
  if (file === undefined) {
    file = { fd: openSync(shmPath, 'r'), users: 0 };
    shmFiles.set(key, file);
  }
  file.users += 1;
  return { key, file };
}

function release(key: string): void {
  const file = shmFiles.get(key);
  if (file === undefined) return;
  file.users -= 1;
  if (file.users > 0) return;
  shmFiles.delete(key);
  closeSync(file.fd);
}

const readVersion = endianness() === 'LE' ? Buffer.prototype.readUInt32LE : Buffer.prototype.readUInt32BE;

function validHeader(header: Buffer): boolean {
  return (
    readVersion.call(header, 0) === WAL_INDEX_VERSION &&
    header[IS_INIT_OFFSET] === 1 &&
    header.compare(header, 0, COPY_BYTES, COPY_BYTES, HEADER_BYTES) === 0
  );
}

/**
 * Tells whether any connection, in this process or another, has committed to a SQLite database in WAL
 * mode since the last look, without taking a lock: it reads the wal-index header from the `-shm` file.
 * Every commit rewrites that header before it returns (iChange and the WAL's frame count grow, or a
 * restarted WAL gets a new salt), both copies, so a header byte-identical to the last one read means no
 * commit since. A read that overlaps a commit sees a torn or an old header: torn (the copies differ) or
 * anything unexpected counts as a change, and the old one is right for a read running alongside that
 * commit. `PRAGMA data_version` answers the same question but takes the WAL read lock (four fcntl calls);
 * this is one pread. The `-shm` file stays while a connection is open: the store's own is, until close().
 */
export class WalIndexWatch {
  readonly #key: string;
  readonly #fd: number;
  readonly #read = Buffer.alloc(HEADER_BYTES);
  readonly #seen = Buffer.alloc(HEADER_BYTES);
  #generation = 0;
  #token = '0';
  #closed = false;

  /** `databaseFile`: the database's file as SQLite opened it (symbolic links resolved). */
  constructor(databaseFile: string) {
    const { key, file } = acquire(`${databaseFile}-shm`);
    this.#key = key;
    this.#fd = file.fd;
  }

  /** Changes whenever a commit happened since the previous call; unchanged otherwise. */
  token(): string {
    // A read queued before the store closed runs after it: the store is gone, not broken.
    if (this.#closed) throw new StoreUnavailableError(new Error('the store is closed'));
    const length = readSync(this.#fd, this.#read, 0, HEADER_BYTES, 0);
    if (length !== HEADER_BYTES || !validHeader(this.#read) || !this.#read.equals(this.#seen)) {
      this.#read.copy(this.#seen);
      this.#generation += 1;
      this.#token = String(this.#generation);
    }
    return this.#token;
  }

  /** Call after the store's connection closed. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    release(this.#key);
  }
}
