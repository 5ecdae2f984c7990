import { type ChildProcess, spawn } from 'node:child_process';
import type { Cleanup } from './cleanup.js';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolves when the child has exited (at once if it already has). */
function exited(child: ChildProcess): Promise<Exit> {
  if (!running(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Sends `signal`, then SIGKILL if the child is still there after `graceMs`. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs: number): Promise<Exit> {
  if (running(child)) child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited(child);
  } finally {
    clearTimeout(timer);
  }
}

export interface ServerChild {
  readonly pid: number;
  /** The port it listens on, on 127.0.0.1. */
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts a bench server (`node --import tsx script ...args`) as a process of its own, stopped at cleanup or
 * by stop(); it sends its port over IPC once it listens, and exits when the bench's IPC channel closes.
 */
export async function startServerChild(
  what: string,
  script: string,
  args: readonly string[],
  cleanup: Cleanup,
): Promise<ServerChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stop = cleanup.defer(what, () => stopChild(child, 'SIGTERM', 5000).then(() => undefined));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`${what} exited (${code ?? signal})`)));
  });
  const { pid } = child;
  if (pid === undefined) throw new Error(`${what} has no pid`);
  return { pid, port, stop };
}
