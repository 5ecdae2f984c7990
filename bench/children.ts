import { type ChildProcess, spawn } from 'node:child_process';
import { stopChild } from '../dev/child-exit.js';
import type { Cleanup } from './cleanup.js';

export interface ServerChild {
  readonly child: ChildProcess;
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
  return { child, pid, port, stop };
}
