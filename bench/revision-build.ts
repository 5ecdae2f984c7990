import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const BUILD_TIMEOUT_MS = 300_000;

export interface BuiltRevision {
  /** As given on the command line, e.g. a commit, a tag or HEAD~3. */
  readonly rev: string;
  readonly commit: string;
  /** Its build's dist/cli.js. */
  readonly cli: string;
}

async function run(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await exec(command, args, { cwd, timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 2 ** 20 });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    const output = `${stdout ?? ''}${stderr ?? ''}`.trim().slice(-4000);
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${output || (error as Error).message}`);
  }
}

/**
 * Revision `rev` of the checkout at `repo`, built by its own `npm run build` in `dir` (which must not exist
 * yet, and is removed with the bench's temporary directory). The files come from `git archive`, which
 * leaves the repository as it was: no worktree to remove afterwards, whatever happens. node_modules is a
 * symlink to the checkout's, so the revision must build and run on today's dependencies.
 */
export async function buildRevision(rev: string, repo: string, dir: string): Promise<BuiltRevision> {
  const commit = (await run('git', ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`], repo)).trim();
  mkdirSync(dir);
  const tar = `${dir}.tar`;
  await run('git', ['archive', '--format=tar', '-o', tar, commit], repo);
  await run('tar', ['-xf', tar, '-C', dir], repo);
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await run('npm', ['run', 'build'], dir);
  return { rev, commit, cli: join(dir, 'dist/cli.js') };
}

/**
 * The working tree's build (dist/, which `npm run bench` has just made) copied into `dir`, beside its
 * package.json and a node_modules symlink: the others working in this checkout may rebuild dist/ while
 * the comparison runs, and each order starts the services afresh.
 */
export async function snapshotWorkingTree(repo: string, dir: string): Promise<BuiltRevision> {
  const state = await workingTree(repo);
  mkdirSync(dir);
  cpSync(join(repo, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(repo, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { rev: 'the working tree', commit: state, cli: join(dir, 'dist/cli.js') };
}

/** HEAD, and how many files differ from it in the working tree. */
async function workingTree(repo: string): Promise<string> {
  const head = (await run('git', ['rev-parse', '--short', 'HEAD'], repo)).trim();
  // --no-optional-locks: the others' git commands in this checkout never find the index locked by the bench.
  const status = await run('git', ['--no-optional-locks', 'status', '--porcelain'], repo);
  const changed = status.split('\n').filter((line) => line.trim() !== '').length;
  return changed === 0 ? `HEAD ${head}` : `HEAD ${head} with ${changed} files changed or new`;
}
