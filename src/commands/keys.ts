import { systemClock } from '../clock.js';
import type { Config } from '../config/config.js';
import { parseScopes } from '../domain/api-key.js';
import { CLI_AUDIT } from '../domain/audit.js';
import { isOwner, OWNER_PROBLEM, ownerFromKeyName } from '../domain/owner.js';
import { issueApiKey, KEY_NAME_PROBLEM, KEY_NAME_RULE } from '../services/api-keys.js';
import { openStore } from '../store/open-store.js';
import type { ApiKeyRecord } from '../store/records.js';
import { DuplicateNameError } from '../store/store-errors.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** `--expires 2027-01-31` (midnight UTC) or an ISO 8601 date-time with its zone; impossible dates are refused. */
function parseExpiry(text: string): Date {
  const day = DATE_ONLY.test(text) ? text : DATE_TIME.exec(text)?.[1];
  const date = new Date(DATE_ONLY.test(text) ? `${text}T00:00:00Z` : text);
  const realDay =
    day !== undefined && !Number.isNaN(date.getTime()) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day);
  if (!realDay) {
    throw new UsageError(
      `--expires takes a date such as 2027-01-31 or a date-time with its zone such as 2027-01-31T12:00Z, got "${text}"`,
    );
  }
  return date;
}

function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

const KEYS_USAGE = `Usage:
  petstore keys create --name NAME [--owner OWNER] [--scopes read,write,webhooks,admin] [--expires DATE]
  petstore keys list [--json]
  petstore keys revoke ID|NAME`;

function day(date: Date | null): string {
  return date === null ? '-' : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function state(key: ApiKeyRecord, now: Date): string {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  return 'active';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function create(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values } = parseOptions(args, {
    name: { type: 'string' },
    owner: { type: 'string' },
    scopes: { type: 'string' },
    expires: { type: 'string' },
  });
  const { name } = values;
  if (name === undefined) throw new UsageError('keys create needs --name NAME');
  if (!KEY_NAME_RULE.test(name)) throw new UsageError(KEY_NAME_PROBLEM);
  const owner = values.owner ?? ownerFromKeyName(name);
  if (owner === undefined) {
    throw new UsageError(`the key name "${name}" is no owner name (${OWNER_PROBLEM}): give --owner OWNER`);
  }
  if (!isOwner(owner)) throw new UsageError(`--owner: ${OWNER_PROBLEM}, got "${owner}"`);
  const scopes = values.scopes === undefined ? undefined : usage(() => parseScopes(values.scopes as string));
  const expiresAt = values.expires === undefined ? null : parseExpiry(values.expires);
  // A key that expired before it was issued is a mistake in the command line, like an impossible date.
  if (expiresAt !== null && expiresAt <= systemClock()) {
    throw new UsageError(`--expires must be in the future, got "${values.expires}"`);
  }
  const store = await openStore(config.database);
  try {
    const issued = await issueApiKey(store, systemClock, {
      name,
      owner,
      expiresAt,
      ...(scopes === undefined ? {} : { scopes }),
    });
    // The key alone on stdout, so scripts can capture it: KEY=$(petstore keys create --name ci)
    out.write(`${issued.key}\n`);
  } catch (error) {
    if (!(error instanceof DuplicateNameError)) throw error;
    throw new Error(
      `${error.message}: names are unique among active keys; choose another, or first "petstore keys revoke ${name}"`,
    );
  } finally {
    await store.close();
  }
}

async function list(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values } = parseOptions(args, { json: { type: 'boolean' } });
  const store = await openStore(config.database);
  try {
    const keys = await store.apiKeys.list();
    if (values.json === true) {
      out.write(`${JSON.stringify(keys, null, 2)}\n`);
      return;
    }
    const now = systemClock();
    const header = ['ID', 'NAME', 'OWNER', 'PREFIX', 'SCOPES', 'STATE', 'CREATED', 'EXPIRES', 'LAST USED'];
    const rows = keys.map((key) => [
      String(key.id),
      key.name,
      key.owner,
      `${key.prefix}…`,
      key.scopes.join(','),
      state(key, now),
      day(key.createdAt),
      day(key.expiresAt),
      day(key.lastUsedAt),
    ]);
    out.write(`${table([header, ...rows])}\n`);
  } finally {
    await store.close();
  }
}

async function revoke(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { positionals } = parseOptions(args, {}, true);
  const [target, ...extra] = positionals;
  if (target === undefined || extra.length > 0) throw new UsageError('keys revoke takes one ID or NAME');
  const store = await openStore(config.database);
  try {
    const revoked = await store.apiKeys.revoke(target, systemClock(), CLI_AUDIT);
    if (revoked === undefined) throw new Error(`no active key with id or name "${target}"`);
    out.write(`revoked key ${revoked.id} (${revoked.name})\n`);
  } finally {
    await store.close();
  }
}

export async function keysCommand(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h' || rest.includes('--help') || rest.includes('-h')) {
    out.write(`${KEYS_USAGE}\n`);
    return;
  }
  switch (sub) {
    case 'create':
      return create(config, rest, out);
    case 'list':
      return list(config, rest, out);
    case 'revoke':
      return revoke(config, rest, out);
    default:
      throw new UsageError(
        `keys needs a subcommand: create, list or revoke${sub === undefined ? '' : ` (got "${sub}")`}`,
      );
  }
}
