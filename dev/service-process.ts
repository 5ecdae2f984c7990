import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { READY_MESSAGE, type ReadyFields } from '../src/process/ready-line.js';
import { SHUTDOWN_GRACE_MS } from '../src/process/signals.js';
import { type Exit, exited, outputClosed, stopChild } from './child-exit.js';
import { CLI } from './petstore-cli.js';

/** Past the service's own graceful-stop limit, and the primary's under --workers: then it is hung. */
const STOP_GRACE_MS = SHUTDOWN_GRACE_MS + 10_000;
const READY_POLL_MS = 20;

/**
 * The url of the service's ready line (src/process/ready-line.ts) in `log`, its stdout of JSON lines;
 * undefined until it is there.
 */
export function readyUrl(log: string): string | undefined {
  for (const line of log.split('\n')) {
    if (!line.includes(READY_MESSAGE)) continue;
    let entry: { readonly msg?: unknown } & { readonly [field in keyof ReadyFields]?: unknown };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    // `msg` is pino's message key.
    if (entry.msg === READY_MESSAGE && typeof entry.url === 'string') return entry.url;
  }
  return undefined;
}

export interface ServeOptions {
  readonly env: NodeJS.ProcessEnv;
  /** After `serve`, e.g. --workers 2. */
  readonly args?: readonly string[];
  /** Another build's dist/cli.js; the working tree's by default. */
  readonly cli?: string | undefined;
  /** Node's own flags, before the CLI (e.g. --cpu-prof). */
  readonly nodeFlags?: readonly string[];
  /** A program that runs node (e.g. valgrind), with its arguments before node's command line. */
  readonly wrapper?: { readonly command: string; readonly args: readonly string[] } | undefined;
  /**
   * stdout and stderr appended to this file instead of pipes: a bench under load must not depend on how
   * fast it drains a pipe.
   */
  readonly logFile?: string;
}

/** `petstore serve` as a child process, from its spawn on. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit status once the process has ended. */
  readonly exit: Promise<Exit>;
  /** Its stdout so far, the log lines; with a log file, that file (stderr included). */
  stdout(): string;
  /** Its stderr so far (a first key, why it failed); with a log file, empty: it is in the file. */
  stderr(): string;
  /**
   * Resolves with the url of the ready line (it listens, and a first key is printed); rejects, quoting the
   * output, if the process exits first or is not ready within `timeoutMs`.
   */
  ready(timeoutMs: number): Promise<string>;
  /** Sends `signal` (SIGTERM by default), SIGKILL if the process is still there after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<Exit>;
}

/** Starts `petstore serve`; the caller registers its clean-up at once, then waits for `ready`. */
export function spawnService(options: ServeOptions): ServiceProcess {
  const node = [...(options.nodeFlags ?? []), options.cli ?? CLI, 'serve', ...(options.args ?? [])];
  const { wrapper, logFile } = options;
  const [command, args] =
    wrapper === undefined ? [process.execPath, node] : [wrapper.command, [...wrapper.args, process.execPath, ...node]];
  const log = logFile === undefined ? undefined : openSync(logFile, 'a');
  const child = spawn(command, args, {
    env: options.env,
    stdio: log === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', log, log],
  });
  if (log !== undefined) closeSync(log);
  const exit = exited(child);
  // Also keeps a failure to start from surfacing as an unhandled rejection; callers await `exit` or `ready`.
  let ended = false;
  exit.then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const output = logFile === undefined ? () => stdout : () => readFileSync(logFile, 'utf8');
  const service: ServiceProcess = {
    child,
    exit,
    stdout: output,
    stderr: () => stderr,
    async ready(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const said = () => `${output().slice(-4000)}${stderr.slice(-4000)}`;
      for (;;) {
        const url = readyUrl(output());
        if (url !== undefined) return url;
        if (ended) {
          const status = await exit.catch((error: Error) => error.message);
          await outputClosed(child);
          throw new Error(`serve exited (${JSON.stringify(status)}) before it was ready:\n${said()}`);
        }
        if (Date.now() > deadline) throw new Error(`serve was not ready within ${timeoutMs} ms:\n${said()}`);
        await sleep(READY_POLL_MS);
      }
    },
    stop: (signal = 'SIGTERM', graceMs = STOP_GRACE_MS) => stopChild(child, signal, graceMs),
  };
  return service;
}
