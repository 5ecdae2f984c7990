import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Exit, exited, outputClosed } from './child-exit.js';

/** The working tree's build (`npm run build` first): tests and bench drive the real binary, as an operator would. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

export interface CliResult extends Exit {
  readonly stdout: string;
  readonly stderr: string;
}

/** Where the tests and the bench run the service: on the loopback address, its JSON lines at info. */
export const LOCAL_SERVICE = { HOST: '127.0.0.1', LOG_LEVEL: 'info' } as const;

/**
 * The caller's environment for the service on `databaseUrl`, LOCAL_SERVICE on a port of the kernel's
 * choice, with `settings`; less the caller's settings named in `unset` (those of the shell
 * that would change what is tested or measured).
 */
export function serveEnv(
  databaseUrl: string,
  settings: Readonly<Record<string, string>>,
  unset: readonly string[],
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of unset) delete env[name];
  return { ...env, ...LOCAL_SERVICE, PORT: '0', DATABASE_URL: databaseUrl, ...settings };
}

/**
 * Runs `petstore ...args` (the build at `cli`, the working tree's by default) to completion and collects
 * its output; SIGKILLs it after `timeoutMs`, so that a hung command cannot hang its caller.
 */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  { cli = CLI, timeoutMs = 60_000 }: { cli?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const exit = await exited(child);
    await outputClosed(child);
    return { ...exit, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `petstore ...args` and returns its stdout; throws, quoting its stderr, unless it exits 0. */
export async function cliStdout(args: readonly string[], env: NodeJS.ProcessEnv, cli = CLI): Promise<string> {
  const result = await runCli(args, env, { cli });
  if (result.code !== 0) {
    const status = result.code ?? result.signal;
    throw new Error(`petstore ${args.join(' ')} failed (${status}): ${result.stderr.trim()}`);
  }
  return result.stdout;
}

/** Issues a key named `name` through the CLI and returns it. */
export async function createKey(env: NodeJS.ProcessEnv, name: string, cli = CLI): Promise<string> {
  return (await cliStdout(['keys', 'create', '--name', name], env, cli)).trim();
}
