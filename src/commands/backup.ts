import type { Config } from '../config/config.js';
import { backupDatabase } from '../store/backup-database.js';
import { UsageError } from './usage-error.js';

/** `petstore backup FILE`: an online copy of the SQLite database to a new file; says what it wrote. */
export async function backupCommand(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const [target, ...rest] = args;
  if (target === undefined || target.startsWith('-') || rest.length > 0) {
    throw new UsageError('backup takes one argument, the file to create: petstore backup FILE');
  }
  const { source, file, bytes } = await backupDatabase(config.database, target);
  out.write(`backed up ${source} to ${file} (${bytes} bytes)\n`);
}
