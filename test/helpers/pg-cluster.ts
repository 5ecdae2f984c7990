import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private PostgreSQL server on a spare port and a temporary directory, which a test may stop and start at will. */
export interface PgCluster {
  readonly url: string;
  start(): void;
  /** Stops at once, as a crash would look to clients: connections refused. */
  crash(): void;
  /** Freezes every server process (SIGSTOP): connections are accepted by the kernel but never answered. */
  freeze(): void;
  thaw(): void;
  destroy(): void;
}

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return version === undefined ? undefined : join(root, version, 'bin');
}

/** Why a private cluster cannot be made here, or undefined when it can. */
export function pgClusterUnavailable(): string | undefined {
  const bin = postgresBin();
  if (bin === undefined || !existsSync(join(bin, 'initdb')))
    return 'PostgreSQL server binaries (initdb) are not installed';
  if (process.getuid?.() !== 0) return 'making a private cluster needs root (to run initdb as the postgres user)';
  try {
    execFileSync('id', ['-u', 'postgres']);
  } catch {
    return 'there is no postgres user to run initdb as';
  }
  return undefined;
}

export async function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export async function createPgCluster(): Promise<PgCluster> {
  const bin = postgresBin() as string;
  const dir = mkdtempSync(join(tmpdir(), 'petstore-pg-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const port = await sparePort();
  const asPostgres = (tool: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe', timeout: 60_000 });
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const signalAll = (signal: 'STOP' | 'CONT') => {
    const postmaster = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0] as string;
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', postmaster], { encoding: 'utf8' }).split('\n');
    const pids = [postmaster, ...children.map((line) => line.trim())].filter((pid) => pid !== '');
    execFileSync('kill', [`-${signal}`, ...pids]);
  };
  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => {
      asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', 'start']);
    },
    crash: () => {
      asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    freeze: () => signalAll('STOP'),
    thaw: () => signalAll('CONT'),
    destroy: () => {
      try {
        signalAll('CONT');
      } catch {
        // not running
      }
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
