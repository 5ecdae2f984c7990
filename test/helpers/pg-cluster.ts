import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** A private PostgreSQL server on a spare port and a temporary directory, which a test may stop and start at will. */
export interface PgCluster {
  readonly url: string;
  /** The server's log (its stderr): what `log_statement` logs, for one. */
  readonly logFile: string;
  start(): void;
  /** Stops at once, as a crash would look to clients: connections refused. */
  crash(): void;
  /** Freezes every server process (SIGSTOP): connections are accepted by the kernel but never answered. */
  freeze(): void;
  thaw(): void;
  destroy(): void;
  /** Stops and removes the cluster once process `pid` has ended, however it ends (a detached watcher polls). */
  destroyAfter(pid: number): void;
}

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return version === undefined ? undefined : join(root, version, 'bin');
}

/** The path of one of the PostgreSQL server's tools (pg_dump, pg_restore), where the machine has them. */
export function postgresTool(name: string): string {
  return join(postgresBin() ?? '/usr/bin', name);
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

/** The postgres user's ids: a cluster's files must be its own. */
function postgresOwner(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function runAsPostgres(bin: string, tool: string, args: string[]): Buffer {
  return execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], {
    stdio: 'pipe',
    timeout: 60_000,
  });
}

/**
 * An initdb'd data directory, made once per machine and PostgreSQL version and copied for each cluster:
 * initdb takes about a second of CPU, a copy a tenth. Made under a name of its own and renamed into place,
 * so processes that start at once never see half of one (the loser's copy is dropped).
 */
function templateData(bin: string): string {
  const template = join(tmpdir(), `petstore-test-pg-template-${basename(dirname(bin))}`);
  if (existsSync(template)) return template;
  const { uid, gid } = postgresOwner();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-pg-initdb-'));
  chownSync(dir, uid, gid);
  runAsPostgres(bin, 'initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
  try {
    renameSync(join(dir, 'data'), template);
  } catch (error) {
    if (!existsSync(template)) throw error;
  }
  rmSync(dir, { recursive: true, force: true });
  return template;
}

export async function createPgCluster(): Promise<PgCluster> {
  const bin = postgresBin() as string;
  const dir = mkdtempSync(join(tmpdir(), 'petstore-pg-'));
  const { uid, gid } = postgresOwner();
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  execFileSync('cp', ['-a', templateData(bin), data]);
  const port = await sparePort();
  const asPostgres = (tool: string, args: string[]) => runAsPostgres(bin, tool, args);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const signalAll = (signal: 'STOP' | 'CONT') => {
    const postmaster = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0] as string;
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', postmaster], { encoding: 'utf8' }).split('\n');
    const pids = [postmaster, ...children.map((line) => line.trim())].filter((pid) => pid !== '');
    execFileSync('kill', [`-${signal}`, ...pids]);
  };
  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    logFile: join(dir, 'server.log'),
    start: () => {
      asPostgres('pg_ctl', ['-D', data, '-l', cluster.logFile, '-o', options, '-w', 'start']);
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
    destroyAfter: (pid) => {
      const stop = `runuser -u postgres -- ${join(bin, 'pg_ctl')} -D ${data} -m immediate -w stop`;
      const script = `while kill -0 ${pid} 2>/dev/null; do sleep 1; done; ${stop} >/dev/null 2>&1; rm -rf ${dir}`;
      spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
    },
  };
  cluster.start();
  return cluster;
}
