import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { TestContext } from 'node:test';

/** Runs a command until the test ends, collecting what it prints (stdout and stderr, as they come). */
export function runCollecting(
  t: TestContext,
  command: string,
  args: readonly string[],
  options: { cwd?: string; env: NodeJS.ProcessEnv },
): { output: () => string } {
  const child: ChildProcess = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
  }
  return { output: () => output };
}

/** A port free on 127.0.0.1 a moment ago, for a program that must be told its port before it listens. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
