/**
 * `npm run measure:streams [-- --cli OTHER/dist/cli.js]`: the service's resident memory with 300 live event
 * streams whose clients never read, through three bursts of 3,000 events (pets created 20 at a time), on a
 * fresh SQLite file. Prints RSS before the streams, with them open, and at the peak and 2 s after each burst
 * (from /proc/<pid>/status, so Linux only). A measurement for docs/performance.md, not a test.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CLI, createKey, serveEnv } from './petstore-cli.js';
import { spawnService } from './service-process.js';

const STREAMS = 300;
const BURSTS = 3;
const EVENTS_PER_BURST = 3000;
const AT_ONCE = 20;

const { values } = parseArgs({ options: { cli: { type: 'string' } } });
const cli = values.cli ?? CLI;

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) / 1024);
}

/** A client that asks for the stream and never reads a byte of it: the kernel's buffers fill, then ours. */
function unreadStream(url: URL, key: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(
        `GET /v1/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\n` +
          'Accept: text/event-stream\r\n\r\n',
      );
      socket.pause();
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

async function burst(url: URL, key: string): Promise<void> {
  const create = () =>
    fetch(new URL('/v1/pets', url), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex the measured', categoryId: 1 }),
    }).then((response) => response.arrayBuffer());
  for (let i = 0; i < EVENTS_PER_BURST; i += AT_ONCE) await Promise.all(Array.from({ length: AT_ONCE }, create));
}

const dir = mkdtempSync(join(tmpdir(), 'petstore-streams-'));
const settings = { RATE_LIMIT_RPS: '0', EVENT_STREAMS: '1000', EVENT_STREAMS_PER_OWNER: '1000' };
const env = serveEnv(`sqlite:${join(dir, 'p.db')}`, settings, ['DATABASE_URL', 'REDIS_URL']);
const key = await createKey(env, 'measure', cli);
const service = spawnService({ env, cli });
try {
  const url = new URL(await service.ready(30_000));
  const pid = service.child.pid as number;
  console.log(`${cli}: RSS ${rssMb(pid)} MB before any stream`);
  const sockets = await Promise.all(Array.from({ length: STREAMS }, () => unreadStream(url, key)));
  await sleep(1000);
  console.log(`${STREAMS} streams open: RSS ${rssMb(pid)} MB`);
  for (let n = 1; n <= BURSTS; n++) {
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(pid));
    }, 50);
    await burst(url, key);
    await sleep(2000);
    clearInterval(sampler);
    console.log(`burst ${n} (${EVENTS_PER_BURST} events): RSS peak ${peak} MB, 2 s after ${rssMb(pid)} MB`);
  }
  for (const socket of sockets) socket.destroy();
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
