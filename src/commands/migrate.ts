import type { Config } from '../config/config.js';
import { migrateDatabase } from '../store/migrate-database.js';
import { UsageError } from './usage-error.js';

/** `petstore migrate`: brings the schema up to date and says which migrations that applied, if any. */
export async function migrateCommand(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  if (args.length > 0) throw new UsageError(`migrate takes no arguments (got "${args.join(' ')}")`);
  const { kind, applied, version } = await migrateDatabase(config.database);
  out.write(
    applied.length === 0
      ? `${kind} schema up to date (version ${version})\n`
      : `applied migrations ${applied.join(', ')}: ${kind} schema now at version ${version}\n`,
  );
}
