import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { startServerChild } from './children.js';
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
  const { pid, port, stop } = await startServerChild('the ceiling server', SERVER, [file], cleanup);
  const origin = `http://127.0.0.1:${port}`;
  const answered = await capture(`${origin}${path}`, headers);
  if (!isDeepStrictEqual(answered, response)) {
    throw new Error(`the ceiling answers differently:\n${JSON.stringify(answered)}\nnot\n${JSON.stringify(response)}`);
  }
  return { pid, origin, stop };
}
