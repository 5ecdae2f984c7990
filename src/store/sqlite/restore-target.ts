import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { RestoreError } from './restore-error.js';

/** Links followed before giving up: Linux's own bound (ELOOP). */
const MAX_LINKS = 40;

/**
 * Where the database at `path` really is, its links followed: those of its directories, and the file's own
 * even when what it points at does not exist yet (a link into a new volume). A restore renames files in
 * the directory this names, so the database lands where the link points (with its -wal and -shm, which
 * SQLite keeps beside the real file) and the link stays a link; renaming the link itself would put the
 * database beside it, off the volume.
 */
export function restoreTarget(path: string): string {
  let current = resolve(path);
  for (let links = 0; links <= MAX_LINKS; links++) {
    const here = join(realDirectory(dirname(current)), basename(current));
    if (!lstatSync(here, { throwIfNoEntry: false })?.isSymbolicLink()) return here;
    current = resolve(dirname(here), readlinkSync(here));
  }
  throw new RestoreError(`${path}: too many levels of symbolic links`);
}

/** The directory's own path, its links followed; refused when it does not exist. */
function realDirectory(dir: string): string {
  try {
    return realpathSync(dir);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new RestoreError(`the database's directory ${dir} does not exist`);
    if (code === 'ELOOP') throw new RestoreError(`${dir}: too many levels of symbolic links`);
    throw error;
  }
}
