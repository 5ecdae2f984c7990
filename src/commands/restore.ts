import type { Config } from '../config/config.js';
import { checkBackupFile, markDatabaseRestored, restoreDatabase } from '../store/restore-database.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

/**
 * `petstore restore [--check] FILE`: puts a SQLite backup in place of the database (the service stopped),
 * or with --check only says whether it could and what it holds. Says what it did.
 */
export async function restoreCommand(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values, positionals } = parseOptions(args, { check: { type: 'boolean' } }, true);
  const [file, ...rest] = positionals;
  if (file === undefined || rest.length > 0) {
    throw new UsageError('restore takes one argument, the backup file: petstore restore [--check] FILE');
  }
  if (values.check === true) {
    const facts = await checkBackupFile(config.database, file);
    out.write(
      `${file} can be restored: schema version ${facts.version}, events up to evt_${facts.lastEventSeq}, ` +
        `${facts.pendingDeliveries} webhook deliveries pending\n`,
    );
    return;
  }
  const restored = await restoreDatabase(config.database, file, new Date());
  out.write(
    `restored ${file}: events up to evt_${restored.lastEventSeq} kept, new ones from evt_${restored.nextEventSeq}; ` +
      `${restored.pendingDeliveries} webhook deliveries pending will be sent` +
      (restored.replaced === undefined ? '\n' : `; the database it replaced is kept as ${restored.replaced}\n`),
  );
}

/** `petstore restored`: after pg_restore, every instance stopped, makes the database safe to serve again. */
export async function restoredCommand(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  if (args.length > 0) throw new UsageError(`restored takes no arguments (got "${args.join(' ')}")`);
  const marked = await markDatabaseRestored(config.database, new Date());
  out.write(
    `marked restored: events up to evt_${marked.lastEventSeq} kept, new ones from evt_${marked.nextEventSeq}; ` +
      `${marked.pendingDeliveries} webhook deliveries pending will be sent\n`,
  );
}
