import { rmSync } from 'node:fs';

/** Removes the SQLite database at `path` with the files SQLite keeps beside it (WAL, shared memory, journal). */
export function removeDatabaseFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) rmSync(file, { force: true });
}
