import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createKey } from '../../dev/petstore-cli.js';
import { WAL_SIZE_LIMIT_BYTES } from '../../src/store/sqlite/open-database.js';
import { type CallOptions, type CallResult, expectError, request } from '../helpers/calls.js';
import { cliEnv, freshDatabaseUrl, type ServeProcess, startServe } from '../helpers/process.js';
import { eachBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Why a small tmpfs cannot be mounted here (it needs root), or undefined when it can. */
function tmpfsUnavailable(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-tmpfs-probe-'));
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    if (mounted.status !== 0) return `cannot mount a tmpfs (root needed): ${String(mounted.stderr).trim()}`;
    spawnSync('umount', [dir]);
    return undefined;
  } finally {
    rmdirSync(dir);
  }
}

const noTmpfs = tmpfsUnavailable();
if (noTmpfs !== undefined && process.env.CI === 'true') {
  throw new Error(`${noTmpfs}; under CI=true the full-disk test must run`);
}

/** A directory on a tmpfs of `size` (mount's syntax, e.g. 4m), unmounted after the test. */
function smallDisk(t: TestContext, size: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-small-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  assert.equal(mounted.status, 0, String(mounted.stderr));
  t.after(() => {
    // Lazily: the server (stopped by a later hook) may still hold the database open.
    spawnSync('umount', ['-l', dir]);
    rmdirSync(dir);
  });
  return dir;
}

/** Fills the file system holding `dir` to the last byte; returns the filler file (remove it to free the space). */
function fillDisk(dir: string): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (const chunk of [Buffer.alloc(64 * 1024, 1), Buffer.alloc(512, 1), Buffer.alloc(1, 1)]) {
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

async function timed(url: string, method: string, path: string, options: CallOptions = {}) {
  const started = performance.now();
  const result = await request(url, method, path, options);
  return { result, ms: performance.now() - started };
}

/** The server's log entries at warn or above written after `offset` characters of its stdout. */
function warnings(server: ServeProcess, offset: number): Array<Record<string, unknown>> {
  return server
    .stdout()
    .slice(offset)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => Number(entry.level) >= 40);
}

/**
 * Another process (not this one: its lock must be foreign to the server too) that takes SQLite's write
 * lock with BEGIN IMMEDIATE and holds it until `release`.
 */
async function holdWriteLock(t: TestContext, path: string): Promise<{ release(): Promise<void> }> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    db.prepare("INSERT INTO pets (name, category_id, status) VALUES ('foreign', 1, 'available')").run();
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    exited.then(() => reject(new Error('the lock holder exited before locking')));
  });
  return {
    async release() {
      child.stdin.write('release\n');
      await exited;
    },
  };
}

function expectFull(result: CallResult): void {
  assert.match(expectError(result, 503, 'service_unavailable'), /disk is full/);
  assert.match(result.headers.get('retry-after') ?? '', /^\d+$/);
}

test('sqlite: a full disk answers writes 503 with Retry-After, keeps reads, /readyz 503, one warning; recovers without restart', {
  skip: noTmpfs,
}, async (t) => {
  const disk = smallDisk(t, '4m');
  const env = cliEnv(join(disk, 'petstore.db'));
  const writer = await createKey(env, 'writer');
  // Never used: its first read is due a last-used write, which cannot commit either.
  const reader = await createKey(env, 'reader');
  const server = await startServe(t, env);
  const created = [
    await request(server.url, 'POST', '/v1/pets', { key: writer, body: { name: 'before', categoryId: 1 } }),
  ];
  assert.equal(created[0]?.status, 201);

  const filler = fillDisk(disk);
  const logged = server.stdout().length;
  // The WAL may still have room for a few commits; the first write it cannot take answers 503.
  let first: CallResult | undefined;
  for (let i = 0; i < 200 && first === undefined; i++) {
    const result = await request(server.url, 'POST', '/v1/pets', {
      key: writer,
      body: { name: `full-${i}`, categoryId: 1 },
    });
    if (result.status === 201) created.push(result);
    else first = result;
  }
  assert.ok(first !== undefined, 'a write failed once the disk was full');
  expectFull(first);
  t.diagnostic(`${created.length - 1} writes committed after the disk filled, then 503`);
  for (let i = 0; i < 5; i++) {
    expectFull(await request(server.url, 'POST', '/v1/pets', { key: writer, body: { name: 'more', categoryId: 1 } }));
  }
  const list = await request(server.url, 'GET', '/v1/pets?limit=100', { key: reader });
  assert.equal(list.status, 200, `a read with a key due its last-used write: ${list.text}`);
  assert.equal((await request(server.url, 'GET', `/v1/pets/${created[0]?.json.id}`, { key: reader })).status, 200);
  expectFull(await request(server.url, 'GET', '/readyz', {}));
  assert.equal((await request(server.url, 'GET', '/healthz', {})).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 200)); // log lines are written asynchronously
  const episode = warnings(server, logged);
  assert.equal(episode.length, 1, `one warning for the episode: ${JSON.stringify(episode)}`);
  assert.match(JSON.stringify(episode[0]), /disk is full/);

  rmSync(filler);
  assert.equal((await request(server.url, 'GET', '/readyz', {})).status, 200, 'ready again without a write');
  const after = await request(server.url, 'POST', '/v1/pets', { key: writer, body: { name: 'after', categoryId: 1 } });
  assert.equal(after.status, 201);
  const names = (await request(server.url, 'GET', '/v1/pets?limit=100', { key: reader })).json.map(
    (pet: { name: string }) => pet.name,
  );
  assert.deepEqual(names, [...created.map((result) => result.json.name), 'after'], 'every 201 kept, no 503 stored');
  assert.equal(warnings(server, logged).length, 1);
  assert.equal(server.child.exitCode, null);
});

test('sqlite: another process holding the write lock stalls neither /healthz nor reads; a write waits 10 s at most', async (t) => {
  const path = join(tempDir(t), 'petstore.db');
  const env = cliEnv(path);
  const writer = await createKey(env, 'writer');
  // Never used: its first read is due a last-used write, which has to wait for the lock.
  const reader = await createKey(env, 'reader');
  const server = await startServe(t, env);
  const pet = await request(server.url, 'POST', '/v1/pets', { key: writer, body: { name: 'before', categoryId: 1 } });
  assert.equal(pet.status, 201);

  const lock = await holdWriteLock(t, path);
  const blocked = timed(server.url, 'POST', '/v1/pets', { key: writer, body: { name: 'blocked', categoryId: 1 } });
  const slowest = { healthz: 0, read: 0 };
  const reads: number[] = [];
  const until = Date.now() + 10_500;
  while (Date.now() < until) {
    const health = await timed(server.url, 'GET', '/healthz');
    assert.equal(health.result.status, 200);
    slowest.healthz = Math.max(slowest.healthz, health.ms);
    for (const route of ['/v1/pets', `/v1/pets/${pet.json.id}`]) {
      const read = await timed(server.url, 'GET', route, { key: reader });
      reads.push(read.result.status);
      slowest.read = Math.max(slowest.read, read.ms);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { result, ms } = await blocked;
  expectError(result, 503, 'service_unavailable');
  assert.match(result.headers.get('retry-after') ?? '', /^\d+$/);
  assert.ok(ms >= 9_500 && ms < 12_000, `the write waited for the lock ${Math.round(ms)} ms, about 10 s`);
  assert.deepEqual(new Set(reads), new Set([200]), 'every read answered 200');
  // Before: stalled behind the write for up to 10 s; 500 ms leaves room for a loaded machine.
  assert.ok(slowest.healthz < 500 && slowest.read < 500, `slowest while locked: ${JSON.stringify(slowest)} ms`);
  t.diagnostic(
    `while locked: ${reads.length} reads, slowest ${JSON.stringify(slowest)} ms; the write: 503 after ${Math.round(ms)} ms`,
  );

  // A write waiting when the lock is released commits as soon as it is free.
  const waiting = timed(server.url, 'POST', '/v1/pets', { key: writer, body: { name: 'waited', categoryId: 1 } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await lock.release();
  const waited = await waiting;
  assert.equal(waited.result.status, 201);
  assert.ok(waited.ms >= 300 && waited.ms < 2_000, `committed ${Math.round(waited.ms)} ms after it was sent`);
  t.diagnostic(`a write sent 300 ms before the release: 201 after ${Math.round(waited.ms)} ms`);
  const names = (await request(server.url, 'GET', '/v1/pets', { key: reader })).json.map(
    (p: { name: string }) => p.name,
  );
  assert.deepEqual(names, ['before', 'foreign', 'waited']);
});

test('sqlite: the WAL swollen behind a long reader returns below its limit once the reader is gone, with no write', async (t) => {
  const path = join(tempDir(t), 'petstore.db');
  const env = cliEnv(path);
  const key = await createKey(env, 'writer');
  const server = await startServe(t, env);
  const walSize = () => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;

  // A reader holding one snapshot (a backup, a report): no checkpoint can pass it, so the WAL only grows.
  const reader = new Database(path, { readonly: true });
  t.after(() => {
    if (reader.open) reader.close();
  });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM pets').get();
  const target = WAL_SIZE_LIMIT_BYTES * 1.5;
  const stopAt = Date.now() + 60_000;
  await Promise.all(
    Array.from({ length: 4 }, async (_, loop) => {
      for (let i = 0; walSize() < target && Date.now() < stopAt; i++) {
        const result = await request(server.url, 'POST', '/v1/pets', {
          key,
          body: { name: `p${loop}-${i}`, categoryId: 1 },
        });
        assert.equal(result.status, 201);
      }
    }),
  );
  assert.ok(walSize() >= target, `the WAL grew to ${walSize()} bytes behind the reader`);
  const grown = walSize();
  reader.exec('COMMIT');
  reader.close();

  const started = Date.now();
  while (walSize() > WAL_SIZE_LIMIT_BYTES && Date.now() - started < 15_000) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.ok(walSize() <= WAL_SIZE_LIMIT_BYTES, `the WAL is ${walSize()} bytes ${Date.now() - started} ms after`);
  t.diagnostic(`WAL ${grown} bytes behind the reader, ${walSize()} bytes ${Date.now() - started} ms after it left`);
  assert.equal((await request(server.url, 'GET', '/v1/pets?limit=1', { key })).status, 200);
});

eachBackend((backend) => {
  describe(`store trouble [${backend.name}]`, () => {
    test('a last-used write the database refuses (read-only) fails no read; it is logged once', async (t) => {
      const url = await freshDatabaseUrl(t, backend);
      const env = cliEnv(url);
      const keys = [await createKey(env, 'first'), await createKey(env, 'second')];
      const server = await startServe(t, env);
      // The database refuses every change to api_keys the way a read-only one refuses any write.
      if (backend.name === 'sqlite') {
        const db = new Database(url);
        db.exec("CREATE TRIGGER read_only BEFORE UPDATE ON api_keys BEGIN SELECT RAISE(ABORT, 'read-only'); END");
        db.close();
      } else {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`
          CREATE FUNCTION read_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            RAISE EXCEPTION 'cannot execute UPDATE in a read-only transaction' USING ERRCODE = '25006';
          END $$;
          CREATE TRIGGER read_only BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION read_only()`);
        await client.end();
      }
      const logged = server.stdout().length;
      for (const key of keys) {
        for (let i = 0; i < 3; i++) {
          const result = await request(server.url, 'GET', '/v1/pets', { key });
          assert.equal(result.status, 200, result.text);
        }
      }
      // The touches run after the answers: give them a moment to fail and be logged.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const logs = warnings(server, logged);
      assert.equal(logs.length, 1, JSON.stringify(logs));
      assert.match(String(logs[0]?.msg), /last use/);
    });
  });
});
