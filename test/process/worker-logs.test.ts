import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { CLI, createKey } from '../../dev/petstore-cli.js';
import { readyUrl } from '../../dev/service-process.js';
import { cliEnv } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * `serve --workers N` with stdout on a real pipe (a FIFO: Node's own child pipes are socket pairs, which
 * keep no write whole), read by the test, which can stop reading to make the pipe slow.
 */
async function serveOnPipe(t: TestContext, workers: number) {
  const dir = tempDir(t);
  const env = cliEnv(join(dir, 'petstore.db'));
  const key = await createKey(env, 'logs');
  const fifo = join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  // Opened for reading first, without waiting for a writer, so that opening it for writing does not block.
  const reader = new Socket({ fd: openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK), readable: true });
  const writeFd = openSync(fifo, 'w');
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve', '--workers', String(workers)], {
    env,
    stdio: ['ignore', writeFd, 'ignore'],
  });
  closeSync(writeFd);
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    reader.destroy();
  });
  let text = '';
  reader.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  const ended = once(reader, 'end');
  let url = readyUrl(text);
  for (let waited = 0; url === undefined; waited += 50) {
    if (waited > 20_000) throw new Error(`serve was not ready:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    url = readyUrl(text);
  }
  return {
    url,
    key,
    reader,
    /** Stops the service and returns every line it wrote. */
    async stop(): Promise<string[]> {
      reader.resume();
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      await ended;
      return text.split('\n').filter(Boolean);
    },
    /** Waits until nothing more has arrived for a while (the service has written what it held). */
    async settled(): Promise<void> {
      for (let length = -1; length !== text.length; ) {
        length = text.length;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    },
  };
}

/** Runs `count` requests, `concurrency` at a time; the i-th is `send(i)`. */
async function hammer(count: number, concurrency: number, send: (i: number) => Promise<Response>): Promise<void> {
  let next = 0;
  const loop = async () => {
    while (next < count) {
      const response = await send(next++);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
}

interface Entry {
  readonly msg?: string;
  readonly url?: string;
  readonly requestId?: string;
  readonly pid?: number;
}

/** Every line parsed (a torn or interleaved one fails), then those of the requests sent (not /metrics). */
function requestLines(lines: string[]): Entry[] {
  const entries = lines.map((line): Entry => {
    try {
      return JSON.parse(line);
    } catch {
      return assert.fail(`a torn or interleaved line: ${line.slice(0, 300)}…`);
    }
  });
  return entries.filter((entry) => entry.msg === 'request' && entry.url !== '/metrics');
}

test('serve --workers 3 on one pipe: every line whole, one per request, long lines too', async (t) => {
  const service = await serveOnPipe(t, 3);
  // A stalling reader fills the pipe, so writers would wait on it together, mid-line if they could.
  const stall = setInterval(() => (service.reader.isPaused() ? service.reader.resume() : service.reader.pause()), 40);
  t.after(() => clearInterval(stall));
  const count = 2000;
  // Every tenth request has a 6,000-character URL: its line is longer than a pipe keeps whole (4 KiB).
  const long = `&pad=${'x'.repeat(6000)}`;
  await hammer(count, 40, (i) =>
    fetch(`${service.url}/v1/pets?limit=1${i % 10 === 0 ? long : ''}`, {
      headers: { authorization: `Bearer ${service.key}`, 'x-request-id': `r-${i}` },
    }),
  );
  clearInterval(stall);
  const lines = requestLines(await service.stop());
  assert.equal(lines.length, count, 'one line per request');
  assert.deepEqual(
    new Set(lines.map((line) => line.requestId)),
    new Set(Array.from({ length: count }, (_, i) => `r-${i}`)),
  );
  assert.equal(lines.filter((line) => (line.url?.length ?? 0) > 6000).length, count / 10);
  assert.equal(new Set(lines.map((line) => line.pid)).size, 3, 'every worker logged');
});

test('a stdout slower than the load: lines are dropped, /metrics counts every one, the rest are whole', async (t) => {
  const service = await serveOnPipe(t, 2);
  service.reader.pause();
  // 12 KB lines: 3,500 of them are more than the 32 MiB the primary holds for two workers.
  const count = 3500;
  const pad = 'x'.repeat(12_000);
  await hammer(count, 20, (i) =>
    fetch(`${service.url}/v1/pets?limit=1&pad=${pad}`, {
      headers: { authorization: `Bearer ${service.key}`, 'x-request-id': `d-${i}` },
    }),
  );
  service.reader.resume();
  await service.settled();
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  const dropped = Number(/^petstore_log_lines_dropped_total (\d+)$/m.exec(metrics)?.[1]);
  const written = requestLines(await service.stop()).length;
  assert.ok(dropped > 0, `lines were dropped (${written} written)`);
  assert.ok(written > 0);
  assert.equal(written + dropped, count, 'every line is written or counted as dropped');
});
