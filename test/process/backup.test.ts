import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { runCli } from '../../dev/petstore-cli.js';
import { cliEnv, firstKey, startServe } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * `petstore backup FILE`, black-box: the CLI copies the database of a running `petstore serve` under a
 * steady write load; nothing waits on it, and the copy holds every write acknowledged before it began.
 */

/** Pets written straight into the file before the service starts, so the copy takes a while. */
const SEEDED = 200_000;
const CREATES_PER_SECOND = 200;

/** A SQLite file of the current schema, with SEEDED pets. */
async function seeded(t: TestContext): Promise<string> {
  const path = join(tempDir(t), 'petstore.db');
  const migrated = await runCli(['migrate'], cliEnv(path));
  assert.equal(migrated.code, 0, migrated.stderr);
  const db = new Database(path);
  const insert = db.prepare("INSERT INTO pets (name, category_id, status) VALUES (?, 1, 'available')");
  db.transaction(() => {
    for (let i = 0; i < SEEDED; i++) insert.run(`seeded pet ${i} ${'x'.repeat(100)}`);
  })();
  db.close();
  return path;
}

/** A full disk: a 1 MB tmpfs, where the machine lets this process mount one. */
function tinyDisk(t: TestContext): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true });
    return undefined;
  }
  t.after(() => {
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true });
  });
  return dir;
}

describe('petstore backup', () => {
  test('under 200 creates/s: none fails or waits 2 s, and the copy holds every write acknowledged before', async (t) => {
    const path = await seeded(t);
    const env = cliEnv(path);
    const server = await startServe(t, env);
    const key = await firstKey(server);
    const acknowledged: Array<{ id: number; at: number }> = [];
    const failures: string[] = [];
    let slowest = 0;
    let loading = true;
    const load = (async () => {
      const started = performance.now();
      for (let i = 0; loading; i++) {
        const due = started + (i * 1000) / CREATES_PER_SECOND;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
        const sent = performance.now();
        const response = await fetch(`${server.url}/v1/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `live ${i}`, categoryId: 2 }),
        }).catch((error: Error) => error);
        slowest = Math.max(slowest, performance.now() - sent);
        if (response instanceof Error || response.status !== 201) {
          failures.push(response instanceof Error ? response.message : String(response.status));
          continue;
        }
        acknowledged.push({ id: ((await response.json()) as { id: number }).id, at: performance.now() });
      }
    })();
    // A hundred creates acknowledged first (half a second, or more on a busy machine).
    while (acknowledged.length < 100 && failures.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const target = join(tempDir(t), 'copy.db');
    const began = performance.now();
    const backup = await runCli(['backup', target], env);
    const ended = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 500));
    loading = false;
    await load;
    t.diagnostic(
      `backup of ${backup.stdout.match(/\((\d+) bytes\)/)?.[1]} bytes took ${(ended - began).toFixed(0)} ms ` +
        `(the command, start to exit); ${acknowledged.length} creates meanwhile, slowest ${slowest.toFixed(0)} ms`,
    );
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /^backed up .*petstore\.db to .*copy\.db \(\d+ bytes\)\n$/);
    assert.deepEqual(failures, []);
    assert.ok(slowest < 2000, `a create waited ${slowest} ms`);
    assert.ok(
      acknowledged.some((pet) => pet.at > ended),
      'creates went on after the copy',
    );

    const copy = new Database(target, { readonly: true });
    t.after(() => copy.close());
    assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
    const ids = new Set(copy.prepare('SELECT id FROM pets WHERE category_id = 2').pluck().all() as number[]);
    const before = acknowledged.filter((pet) => pet.at < began);
    assert.ok(before.length >= 100, `${before.length} acknowledged before the backup began`);
    assert.deepEqual(
      before.filter((pet) => !ids.has(pet.id)),
      [],
      'every create acknowledged before the backup began is in the copy',
    );
    assert.equal(copy.prepare('SELECT count(*) FROM pets WHERE category_id = 1').pluck().get(), SEEDED);
  });

  test('refused with one line and exit 1, nothing left under the name: exists, a directory, a full disk', async (t) => {
    const path = await seeded(t);
    const env = cliEnv(path);
    const dir = tempDir(t);
    const existing = join(dir, 'existing.db');
    writeFileSync(existing, 'keep me');
    const cases: Array<[string, RegExp]> = [
      [existing, /existing\.db exists; a backup never replaces a file/],
      [dir, /is a directory; name the backup file to create/],
      [join(dir, 'missing', 'copy.db'), /missing: no such directory/],
    ];
    const full = tinyDisk(t);
    if (full === undefined) t.diagnostic('no full disk case: this machine does not let the test mount a tmpfs');
    else cases.push([join(full, 'copy.db'), /the disk is full/]);
    for (const [target, message] of cases) {
      const result = await runCli(['backup', target], env);
      assert.equal(result.code, 1, `${target}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    }
    assert.equal(execFileSync('cat', [existing], { encoding: 'utf8' }), 'keep me');
    if (full !== undefined) assert.deepEqual(readdirSync(full), [], 'nothing half-written on the full disk');
    assert.ok(!existsSync(join(dir, 'missing')));

    const usage = await runCli(['backup'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /backup takes one argument, the file to create/);
    const postgres = await runCli(['backup', join(dir, 'pg.db')], cliEnv('postgres://postgres@127.0.0.1:5432/test'));
    assert.equal(postgres.code, 1);
    assert.match(postgres.stderr, /on PostgreSQL use pg_dump \(README, "Backups and restores"\)/);
  });

  test('scheduled: one writer per interval, exactly BACKUP_KEEP kept, with --workers 2; /metrics tells', async (t) => {
    const path = join(tempDir(t), 'petstore.db');
    const dir = join(tempDir(t), 'backups');
    const env = cliEnv(path, { BACKUP_DIR: dir, BACKUP_INTERVAL: '1s', BACKUP_KEEP: '3' });
    const server = await startServe(t, env, 30_000, ['--workers', '2']);
    const key = await firstKey(server);
    const kept = () => readdirSync(dir).filter((name) => /^petstore-\d{8}T\d{6}Z\.db$/.test(name));
    // Written while pets are created; after four or more intervals, three are kept.
    for (let i = 0; i < 60; i++) {
      const response = await fetch(`${server.url}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `p${i}`, categoryId: 1 }),
      });
      assert.equal(response.status, 201);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const metrics = await (
      await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${key}` } })
    ).text();
    const figure = (name: string) => Number(metrics.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1]);
    assert.ok(figure('petstore_backup_age_seconds') < 5, metrics.match(/^petstore_backup.*$/gm)?.join('\n'));
    assert.ok(figure('petstore_backup_size_bytes') > 0);
    assert.equal(figure('petstore_backup_failures_total'), 0);
    // A stop waits for a backup under way: what is left is whole, with nothing half-written beside it.
    await server.stop();
    const names = kept();
    assert.equal(names.length, 3, names.join(', '));
    assert.deepEqual(readdirSync(dir).sort(), names.sort(), 'nothing else left in BACKUP_DIR');
    for (const name of names) {
      const copy = new Database(join(dir, name), { readonly: true });
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok', name);
      copy.close();
    }
    const times = names.map((name) =>
      Date.parse(name.replace(/^petstore-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z\.db$/, '$1-$2-$3T$4:$5:$6Z')),
    );
    times.sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      assert.ok(
        (times[i] as number) - (times[i - 1] as number) >= 1000,
        `one backup per interval: ${names.join(', ')}`,
      );
    }

    const refused = await runCli(['serve'], cliEnv('postgres://postgres@127.0.0.1:5432/test', { BACKUP_DIR: dir }));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /BACKUP_DIR backs up a SQLite database; on PostgreSQL use pg_dump/);
  });
});
