import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { stopChild } from './children.js';
import type { Cleanup } from './cleanup.js';
import { type CapturedResponse, capture } from './http-capture.js';

const SERVER = fileURLToPath(new URL('./ceiling-server.ts', import.meta.url));

export interface Ceiling {
  readonly pid: number;
  readonly origin: string;
  stop(): Promise<void>;
}

/**
 * Starts the ceiling server with `response` and checks that it answers `path` with exactly those bytes
 * (Node's own Date, Connection and Keep-Alive headers aside, which the service's server writes alike).
 */
export async function startCeiling(
  response: CapturedResponse,
  path: string,
  headers: Readonly<Record<string, string>>,
  dir: string,
  cleanup: Cleanup,
): Promise<Ceiling> {
  const file = join(dir, 'ceiling-response.json');
  writeFileSync(file, JSON.stringify(response));
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, file], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stop = cleanup.defer('the ceiling server', () => stopChild(child, 'SIGTERM', 5000).then(() => undefined));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`the ceiling server exited (${code ?? signal})`)));
  });
  const { pid } = child;
  if (pid === undefined) throw new Error('the ceiling server has no pid');
  const origin = `http://127.0.0.1:${port}`;
  const answered = await capture(`${origin}${path}`, headers);
  if (!isDeepStrictEqual(answered, response)) {
    throw new Error(`the ceiling answers differently:\n${JSON.stringify(answered)}\nnot\n${JSON.stringify(response)}`);
  }
  return { pid, origin, stop };
}
