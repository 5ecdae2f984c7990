import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Usage {
  /** CPU time (user + system, all threads, all the processes) over wall time: 100 = one core busy. */
  readonly cpuPercent: number;
  /** Resident memory at the end (of all the processes together). */
  readonly rssMb: number;
  /** The highest resident memory sampled during the work. */
  readonly peakRssMb: number;
}

/** /proc/<pid>/stat counts CPU time in clock ticks. */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const RSS_SAMPLE_MS = 200;

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15; the text after ')' starts at field 3.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

function rssMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) / 1024;
}

/** Process `pid` and its children: the primary of `serve --workers N` and its workers. */
export function processTree(pid: number): number[] {
  // ps exits 1 when there are none.
  const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return [pid, ...children.split('\n').flatMap((line) => (line.trim() === '' ? [] : [Number(line)]))];
}

function total(pids: readonly number[], of: (pid: number) => number): number {
  return pids.reduce((sum, pid) => sum + of(pid), 0);
}

/** The CPU time processes `pids` have used so far (user + system), in seconds, summed. */
export const cpuSecondsOf = (pids: readonly number[]): number => total(pids, cpuSeconds);

/** Runs `work` and measures processes `pids` meanwhile: their CPU use and resident memory, summed. */
export async function measureUsage<T>(
  pids: readonly number[],
  work: () => Promise<T>,
): Promise<{ result: T; usage: Usage }> {
  const startCpu = total(pids, cpuSeconds);
  const startWall = performance.now();
  let peak = total(pids, rssMb);
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, total(pids, rssMb));
    } catch {
      // The process has gone; the work fails and says so, and the reading after it throws.
    }
  }, RSS_SAMPLE_MS);
  try {
    const result = await work();
    const wallSeconds = (performance.now() - startWall) / 1000;
    const rss = total(pids, rssMb);
    const cpuPercent = ((total(pids, cpuSeconds) - startCpu) / wallSeconds) * 100;
    return { result, usage: { cpuPercent, rssMb: rss, peakRssMb: Math.max(peak, rss) } };
  } finally {
    clearInterval(sampler);
  }
}
