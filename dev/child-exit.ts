import type { ChildProcess } from 'node:child_process';

/** How a child process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolves when the child has exited (at once if it already has); rejects if it could not be started. */
export function exited(child: ChildProcess): Promise<Exit> {
  if (!running(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** Resolves once the child's stdout and stderr pipes, if any, have closed: 'exit' can come before they drain. */
export async function outputClosed(child: ChildProcess): Promise<void> {
  const closed = (stream: (NodeJS.ReadableStream & { closed?: boolean }) | null) =>
    stream === null || stream.closed === true ? undefined : new Promise((resolve) => stream.once('close', resolve));
  await Promise.all([closed(child.stdout), closed(child.stderr)]);
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
