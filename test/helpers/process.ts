import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createPostgresSchema, type StoreBackend } from './stores.js';
import { tempDir } from './temp-dir.js';

/** The compiled CLI (`npm run build` first): the tests drive the real binary, as an operator would. */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;
/** Logged once the server listens and any first key has been printed (on stderr). */
const READY = /"msg":"ready"/;
/** Matches a key anywhere in a text; the `g` flag finds every one. */
export const KEY_PATTERN = /psk_[0-9A-Za-z]{36}/g;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface CliResult extends Exit {
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of a spawned CLI: the test's own, on a given database, on a random local port. */
export function cliEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    // Most tests drive bursts through one key; the rate-limit tests turn limiting back on.
    RATE_LIMIT_RPS: '0',
    DATABASE_URL: databaseUrl,
    ...extra,
  };
  delete env.PUBLIC_URL;
  delete env.NODE_OPTIONS;
  return env;
}

/** Resolves when the child exits; SIGKILLs it after `timeoutMs` so a hung process cannot hang the suite. */
function exited(child: ChildProcess, timeoutMs: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/** Runs `node dist/cli.js ...args` to completion and collects its output. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exit = await exited(child, timeoutMs);
  // 'exit' can come before the pipes are drained.
  await Promise.all([streamClosed(child.stdout), streamClosed(child.stderr)]);
  return { ...exit, stdout, stderr };
}

function streamClosed(stream: NodeJS.ReadableStream & { closed?: boolean }): Promise<void> {
  if (stream.closed === true) return Promise.resolve();
  return new Promise((resolve) => stream.once('close', () => resolve()));
}

export interface ServeProcess {
  readonly child: ChildProcess;
  /** The base URL from the "Server listening at" log line. */
  readonly url: string;
  /** Everything written to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit status once the process has ended. */
  readonly exit: Promise<Exit>;
  /** Sends a signal and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Spawns `petstore serve` and waits until it is ready (listening, first key printed). The process is SIGKILLed after the test
 * if it is still running, whatever happened.
 */
export async function startServe(
  t: TestContext,
  env: NodeJS.ProcessEnv,
  timeoutMs = 30_000,
  args: string[] = [],
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Registered before anything can throw, so the child never outlives the test.
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exit = exited(child, 120_000);
  // Keeps an early failure from surfacing as an unhandled rejection; callers await `exit` themselves.
  exit.catch(() => undefined);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve did not listen within ${timeoutMs} ms:\n${stdout}${stderr}`)),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const match = LISTENING.exec(stdout);
      if (match?.[1] !== undefined && READY.test(stdout)) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    exit.then(
      (status) => {
        clearTimeout(timer);
        reject(new Error(`serve exited (${JSON.stringify(status)}) before listening:\n${stdout}${stderr}`));
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
  return {
    child,
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    exit,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exit;
    },
  };
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

/** Issues a key through the CLI and returns it. */
export async function createKey(env: NodeJS.ProcessEnv, name: string): Promise<string> {
  const result = await runCli(['keys', 'create', '--name', name], env);
  if (result.code !== 0) throw new Error(`keys create failed: ${result.stderr}`);
  return result.stdout.trim();
}
