import type { ChildProcess } from 'node:child_process';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolves when the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<Exit> {
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
