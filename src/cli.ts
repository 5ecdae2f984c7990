#!/usr/bin/env node
import './compile-cache.js';
import cluster from 'node:cluster';
import { auditCommand } from './commands/audit.js';
import { backupCommand } from './commands/backup.js';
import { formatFailure } from './commands/failure-message.js';
import { keysCommand } from './commands/keys.js';
import { migrateCommand } from './commands/migrate.js';
import { restoreCommand, restoredCommand } from './commands/restore.js';
import { serveCommand } from './commands/serve.js';
import { UsageError } from './commands/usage-error.js';
import { packageVersion } from './commands/version.js';
import { loadConfig } from './config/config.js';

const USAGE = `Usage: petstore <command>

Commands:
  serve [--workers N|auto]                run the service (npm start); N processes share the port
  migrate                                 bring the database schema up to date; says what it applied
  keys create --name NAME [--scopes read,write] [--expires DATE]
                                          issue a key; prints the key alone on stdout
  keys list [--json]                      list keys (never their secrets)
  keys revoke ID|NAME                     revoke a key at once
  audit [--owner O] [--action A] [--target KIND/ID] [--since TIME] [--limit N] [--json]
                                          who changed what, newest first (the audit log)
  backup FILE                             copy the SQLite database to a new FILE while the service runs
  restore [--check] FILE                  put a SQLite backup in place of the database (service stopped)
  restored                                after pg_restore (every instance stopped): safe to serve again
  --version                               print the version

Configuration comes from the environment; see README.md.`;

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined) {
    // Asked for nothing is not asked for help: a script that forgot its command must not pass as done.
    process.stderr.write(`petstore: a command is needed\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === '--version') {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }
  const config = loadConfig(process.env);
  switch (command) {
    case 'serve':
      // Its modules are loaded there, not here: the HTTP server's take about 0.7 s of CPU to load, which
      // every other command, --help included, would pay for nothing.
      return serveCommand(config, args);
    case 'migrate':
      return migrateCommand(config, args, process.stdout);
    case 'keys':
      return keysCommand(config, args, process.stdout);
    case 'audit':
      return auditCommand(config, args, process.stdout);
    case 'backup':
      return backupCommand(config, args, process.stdout);
    case 'restore':
      return restoreCommand(config, args, process.stdout);
    case 'restored':
      return restoredCommand(config, args, process.stdout);
    default:
      throw new UsageError(`unknown command "${command}"; run "petstore --help"`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(formatFailure(error));
  const usage = error instanceof UsageError || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
  process.exitCode = usage ? 2 : 1;
  // A cluster worker's IPC channel would keep it alive; its primary must see it exit to react.
  if (cluster.isWorker) process.exit();
});
