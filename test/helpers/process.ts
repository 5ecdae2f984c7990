import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { serveEnv } from '../../dev/petstore-cli.js';
import { type ServiceProcess, spawnService } from '../../dev/service-process.js';
import { readyWithin } from './patience.js';
import { createPostgresSchema, type StoreBackend } from './stores.js';
import { tempDir } from './temp-dir.js';

/** Matches a key anywhere in a text; the `g` flag finds every one. */
export const KEY_PATTERN = /psk_[0-9A-Za-z]{36}/g;

/** However a test goes, a process it started is killed by then, so that a hung one cannot hang the suite. */
const LIFETIME_MS = 120_000;

/** The environment of a spawned CLI: the test's own, on a given database, on a random local port. */
export function cliEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // Most tests drive bursts through one key; the rate-limit tests turn limiting back on.
  return serveEnv(databaseUrl, { RATE_LIMIT_RPS: '0', ...extra }, ['PUBLIC_URL', 'NODE_OPTIONS']);
}

export interface ServeProcess extends ServiceProcess {
  /** The base URL of its ready line. */
  readonly url: string;
}

/**
 * Spawns `petstore serve` and waits until it is ready (listening, first key printed). The process is
 * SIGKILLed after the test if it is still running, whatever happened.
 */
export async function startServe(
  t: TestContext,
  env: NodeJS.ProcessEnv,
  timeoutMs = 30_000,
  args: string[] = [],
): Promise<ServeProcess> {
  const service = spawnService({ env, args });
  // Registered before anything can throw, so the child never outlives the test.
  const kill = () => service.child.kill('SIGKILL');
  t.after(kill);
  const limit = setTimeout(kill, LIFETIME_MS);
  service.exit.then(
    () => clearTimeout(limit),
    () => clearTimeout(limit),
  );
  return { ...service, url: await service.ready(readyWithin(timeoutMs)) };
}

/**
 * The key a first start printed on stderr. It is written before the ready line, but on another pipe, so it
 * may arrive a moment after that line: this waits for it briefly.
 */
export async function firstKey(server: ServeProcess): Promise<string> {
  for (let waited = 0; ; waited += 10) {
    const key = server.stderr().match(KEY_PATTERN)?.[0];
    if (key !== undefined) return key;
    if (waited >= 2000) throw new Error(`no first key on stderr:\n${server.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A DATABASE_URL for a fresh database of the backend, removed after the test. */
export async function freshDatabaseUrl(t: TestContext, backend: StoreBackend): Promise<string> {
  if (backend.name === 'sqlite') return join(tempDir(t), 'petstore.db');
  const schema = await createPostgresSchema();
  t.after(() => schema.drop());
  return schema.url;
}
