import type { Config } from '../config/config.js';
import { AUDIT_ACTIONS, AUDIT_TARGET_KINDS, type AuditAction, type AuditTargetKind } from '../domain/audit.js';
import { isOwner, OWNER_PROBLEM } from '../domain/owner.js';
import { parseRfc3339, RFC3339_RULE } from '../domain/rfc3339.js';
import { toAuditEntry } from '../representations/audit-log.js';
import type { AuditEntry } from '../schemas/audit-log.js';
import { openStore } from '../store/open-store.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

const AUDIT_USAGE = `Usage:
  petstore audit [--owner OWNER] [--action ACTION] [--target KIND/ID] [--since DATE-TIME] [--limit N] [--json]`;

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;

function parseTarget(text: string) {
  const slash = text.indexOf('/');
  const kind = text.slice(0, slash);
  if (slash < 1 || slash === text.length - 1 || !(AUDIT_TARGET_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`--target takes KIND/ID, a kind one of ${AUDIT_TARGET_KINDS.join(', ')}; got "${text}"`);
  }
  return { kind: kind as AuditTargetKind, id: text.slice(slash + 1) };
}

function parseQuery(values: Record<string, string | boolean | undefined>) {
  const { owner, action, target, since, limit } = values as Record<string, string | undefined>;
  if (owner !== undefined && !isOwner(owner)) throw new UsageError(`--owner: ${OWNER_PROBLEM}, got "${owner}"`);
  if (action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(`--action is one of ${AUDIT_ACTIONS.join(', ')}; got "${action}"`);
  }
  const sinceAt = since === undefined ? undefined : parseRfc3339(since);
  if (since !== undefined && sinceAt === undefined) throw new UsageError(`--since ${RFC3339_RULE}; got "${since}"`);
  const count = limit === undefined ? DEFAULT_LIMIT : Number(limit);
  if (!Number.isInteger(count) || count < 1 || count > MAX_LIMIT) {
    throw new UsageError(`--limit is a whole number from 1 to ${MAX_LIMIT}; got "${limit}"`);
  }
  return {
    limit: count,
    owner,
    action: action as AuditAction | undefined,
    target: target === undefined ? undefined : parseTarget(target),
    since: sinceAt,
  };
}

/** Who made it, in a word or two: `key 3 (ci)`, `portal of acme`, `cli`, `service`. */
function actorText(entry: AuditEntry): string {
  const { actor } = entry;
  if (actor.kind === 'key') return `key ${actor.keyId} (${actor.keyName})`;
  if (actor.kind === 'portal') return `portal of ${actor.owner}`;
  return actor.kind;
}

/** Each changed field as `field: before -> after`, values as JSON. */
function changesText(entry: AuditEntry): string {
  return Object.entries(entry.changes ?? {})
    .map(([field, { before, after }]) => `${field}: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`)
    .join('; ');
}

/** One line per entry, newest first: when, who, what, about what (and whose), and what changed. */
function line(entry: AuditEntry): string {
  const owner = entry.target.owner === undefined ? '' : ` [${entry.target.owner}]`;
  const changes = changesText(entry);
  return [entry.at, actorText(entry), entry.action, `${entry.target.kind}/${entry.target.id}${owner}`, changes]
    .filter((part) => part !== '')
    .join('  ');
}

/**
 * `petstore audit`: the audit log, newest first, as the API shows it (docs/operations.md): every owner's, or
 * filtered. Reads the database directly, so it works with the service stopped.
 */
export async function auditCommand(config: Config, args: string[], out: NodeJS.WritableStream): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    out.write(`${AUDIT_USAGE}\n`);
    return;
  }
  const { values } = parseOptions(args, {
    owner: { type: 'string' },
    action: { type: 'string' },
    target: { type: 'string' },
    since: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  const query = parseQuery(values);
  const store = await openStore(config.database);
  try {
    const entries = (await store.audit.list(query)).map(toAuditEntry);
    if (values.json === true) out.write(`${JSON.stringify(entries, null, 2)}\n`);
    else for (const entry of entries) out.write(`${line(entry)}\n`);
  } finally {
    await store.close();
  }
}
