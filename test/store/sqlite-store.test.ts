import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { GroupCommit } from '../../src/store/sqlite/group-commit.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { PET_QUERIES } from '../../src/store/sqlite/pets.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { WriteTurns } from '../../src/store/sqlite/write-turns.js';
import { StoreUnavailableError } from '../../src/store/store-errors.js';
import { claimEverything } from '../helpers/claims.js';
import { tempDir } from '../helpers/temp-dir.js';

function plan(db: Database.Database, sql: string, ...params: unknown[]): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>;
  return rows.map((row) => row.detail).join(' | ');
}

test('sqlite: WAL and synchronous=FULL, so an acknowledged write survives a crash', async (t) => {
  const dir = tempDir(t);
  const store = SqliteStore.open(join(dir, 'p.db'));
  t.after(() => store.close());
  const db = new Database(join(dir, 'p.db'), { readonly: true });
  t.after(() => db.close());
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  // synchronous is per connection: read it through the store's own settings by opening as the store does.
  const probe = new Database(join(dir, 'p.db'));
  t.after(() => probe.close());
  probe.pragma('synchronous = FULL');
  assert.equal(probe.pragma('synchronous', { simple: true }), 2);
});

test('sqlite: pages are served by indexes, with no scan and no sort, filtered or not', () => {
  const db = new Database(':memory:');
  for (const migration of SQLITE_MIGRATIONS) db.exec(migration);
  const page = plan(db, PET_QUERIES.page, 0, 21);
  assert.match(page, /SEARCH pets USING INTEGER PRIMARY KEY \((?:row)?id>\?\)/);
  const filtered = plan(db, PET_QUERIES.pageByStatus, 'sold', 0, 21);
  assert.match(filtered, /SEARCH pets USING INDEX pets_status_id \(status=\? AND (?:row)?id>\?\)/);
  for (const text of [page, filtered]) {
    assert.doesNotMatch(text, /SCAN|TEMP B-TREE/);
  }
  assert.match(plan(db, PET_QUERIES.get, 1), /SEARCH pets USING INTEGER PRIMARY KEY \((?:row)?id=\?\)/);
});

test('sqlite: migrations are recorded, idempotent, and a newer schema is refused', async (t) => {
  const path = join(tempDir(t), 'p.db');
  await SqliteStore.open(path).close();
  await SqliteStore.open(path).close();
  const db = new Database(path);
  const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
  assert.deepEqual(
    versions,
    SQLITE_MIGRATIONS.map((_, i) => ({ version: i + 1 })),
  );
  db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(SQLITE_MIGRATIONS.length + 1, 0);
  db.close();
  assert.throws(() => SqliteStore.open(path), /newer than this petstore knows/);
});

test('sqlite: upgraded to fan-out after the commit, each event goes out once: queued by the trigger, or after', async (t) => {
  const path = join(tempDir(t), 'p.db');
  const old = new Database(path);
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const triggerVersion = SQLITE_MIGRATIONS.findIndex((migration) =>
    migration.includes('CREATE TRIGGER events_fan_out'),
  );
  for (const [i, migration] of SQLITE_MIGRATIONS.slice(0, triggerVersion + 1).entries()) {
    old.exec(migration);
    old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(i + 1);
  }
  // The old event's pet is one of its own (not the new pet's id 1): the endpoint orders by subject.
  old.exec(`INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at)
    VALUES ('https://hooks.example.com/', 'pet.created', 1, 's', 0);
    INSERT INTO events (type, at, data) VALUES ('pet.created', 0, '{"id":101,"name":"Old","category_id":1,"status":"sold"}')`);
  assert.equal(old.prepare('SELECT count(*) FROM webhook_deliveries').pluck().get(), 1, 'the trigger queued it');
  old.close();
  const store = SqliteStore.open(path);
  t.after(() => store.close());
  await store.pets.create({ name: 'New', categoryId: 1, status: 'available' });
  assert.deepEqual(
    (await claimEverything(store)).map((delivery) => delivery.event.seq),
    [1, 2],
  );
});

test('sqlite: the deliveries log, made anew without its foreign key, keeps its entries and its ids growing', async (t) => {
  const path = join(tempDir(t), 'p.db');
  const old = new Database(path);
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const logVersion = SQLITE_MIGRATIONS.findIndex((migration) => migration.includes('webhook_attempts_new'));
  for (const [i, migration] of SQLITE_MIGRATIONS.slice(0, logVersion).entries()) {
    old.exec(migration);
    old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(i + 1);
  }
  const attempt = (n: number) => `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_seq, type, attempt,
    status, attempted_at, next_attempt_at) VALUES (1, 1, 1, 'pet.created', ${n}, 'pending', ${n}, 0);`;
  old.exec(`INSERT INTO webhook_endpoints (url, events, enabled, secret, created_at, fanned_seq)
      VALUES ('https://hooks.example.com/', 'pet.created', 1, 's', 0, 1);
    INSERT INTO events (type, at, data) VALUES ('pet.created', 0, '{"id":1,"name":"Old","category_id":1,"status":"sold"}');
    INSERT INTO webhook_deliveries (event_seq, endpoint_id, status, attempts, next_attempt_at)
      VALUES (1, 1, 'pending', 2, 0);
    ${attempt(1)} ${attempt(2)} ${attempt(3)}
    DELETE FROM webhook_attempts WHERE attempt = 3;`);
  old.close();
  const store = SqliteStore.open(path);
  t.after(() => store.close());
  const [delivery] = await claimEverything(store);
  assert.equal(delivery?.attempt, 3);
  const outcome = {
    responseStatus: 204,
    error: undefined,
    nextAttemptAt: undefined,
    pausedUntil: undefined,
    gone: false,
    disableIfFailingSince: undefined,
    stopped: false,
  };
  assert.ok(await store.deliveries.finish({ ...outcome, delivery, status: 'succeeded', attemptedAt: new Date() }));
  assert.deepEqual(
    (await store.webhooks.attempts(1, { limit: 10 })).map((entry) => [entry.id, entry.attempt, entry.status]),
    [
      [4, 3, 'succeeded'],
      [2, 2, 'pending'],
      [1, 1, 'pending'],
    ],
    'no id given twice, the removed 3 included',
  );
});

test('sqlite: the database file holds key hashes, never keys', async (t) => {
  const path = join(tempDir(t), 'p.db');
  const store = SqliteStore.open(path);
  const { issueApiKey } = await import('../../src/services/api-keys.js');
  const { key } = await issueApiKey(store, () => new Date(), { name: 'secret-holder' });
  await store.close();
  const { readFileSync, existsSync } = await import('node:fs');
  for (const file of [path, `${path}-wal`]) {
    if (existsSync(file)) assert.ok(!readFileSync(file).includes(key), `${file} contains the key`);
  }
});

test('sqlite: group commit runs the writes of one turn in one transaction; a failing write is rolled back alone', async (t) => {
  const path = join(tempDir(t), 'g.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x INTEGER UNIQUE)');
  const other = new Database(path, { readonly: true });
  t.after(() => {
    other.close();
    db.close();
  });
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  const committed = () => other.prepare('SELECT count(*) FROM t').pluck().get();
  const writes = new GroupCommit(db);
  let seenByOthersDuringBatch: unknown;
  const results = await Promise.allSettled([
    writes.run(() => insert.run(1).changes),
    writes.run(() => insert.run(1).changes), // UNIQUE violation
    writes.run(() => {
      throw new Error('a bug in one write');
    }),
    writes.run(() => {
      insert.run(2);
      // Still inside the one transaction: another connection sees none of the batch yet.
      seenByOthersDuringBatch = committed();
      return db.inTransaction;
    }),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
  );
  assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE/);
  assert.equal((results[3] as PromiseFulfilledResult<boolean>).value, true);
  assert.equal(seenByOthersDuringBatch, 0, 'one transaction for the whole batch');
  assert.deepEqual(other.prepare('SELECT x FROM t ORDER BY x').pluck().all(), [1, 2], 'the good writes committed');
  assert.equal(db.inTransaction, false);
});

/** A WAL database with a table `t`, and a second connection to it (`holder`) that can hold its write lock. */
function lockableDatabase(t: TestContext, name: string, busyTimeoutMs: number) {
  const path = join(tempDir(t), name);
  const db = new Database(path, { timeout: busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x INTEGER)');
  const holder = new Database(path);
  t.after(() => {
    holder.close();
    db.close();
  });
  return { db, holder };
}

test('sqlite: a later() write rides in the next batch, or commits alone within its time', async (t) => {
  const path = join(tempDir(t), 'l.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x INTEGER)');
  t.after(() => db.close());
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  const writes = new GroupCommit(db);
  let started = Date.now();
  assert.equal(await writes.later(() => insert.run(1).changes, 50), 1);
  const alone = Date.now() - started;
  assert.ok(alone >= 45 && alone < 1000, `committed alone after ${alone} ms`);
  started = Date.now();
  const [riding] = await Promise.all([
    writes.later(() => insert.run(2).changes, 10_000),
    writes.run(() => insert.run(3).changes),
  ]);
  const rode = Date.now() - started;
  assert.equal(riding, 1);
  assert.ok(rode < 1000, `committed with the next batch after ${rode} ms, not 10 s on`);
  assert.deepEqual(db.prepare('SELECT x FROM t ORDER BY x').pluck().all(), [1, 2, 3]);
});

test('sqlite: a batch of writes that need not be durable commits unsynced; one durable write syncs its batch', async (t) => {
  const path = join(tempDir(t), 'u.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (x INTEGER)');
  t.after(() => db.close());
  const synchronous = () => db.pragma('synchronous', { simple: true });
  const writes = new GroupCommit(db);
  const unsynced = { durable: false };
  assert.equal(await writes.run(synchronous, unsynced), 1, 'NORMAL: no fsync of its own');
  const [withDurable] = await Promise.all([writes.run(synchronous, unsynced), writes.run(synchronous)]);
  assert.equal(withDurable, 2, 'FULL: a durable write in the batch');
  assert.equal(await writes.later(synchronous, 1, unsynced), 1);
  assert.equal(synchronous(), 2, 'FULL again after an unsynced batch');
});

test('sqlite: a write lock held by another process past the busy timeout is "unavailable" (503), not a bug', async (t) => {
  const { db, holder } = lockableDatabase(t, 'busy.db', 50);
  holder.exec('BEGIN IMMEDIATE');
  const writes = new GroupCommit(db, { lockWaitMs: 300 });
  await assert.rejects(
    writes.run(() => db.prepare('INSERT INTO t (x) VALUES (1)').run()),
    (error: Error) => error instanceof StoreUnavailableError,
  );
  holder.exec('ROLLBACK');
  assert.equal((await writes.run(() => db.prepare('INSERT INTO t (x) VALUES (1)').run())).changes, 1);
});

test("sqlite: writes waiting for another connection's write lock leave the event loop free, then commit together", async (t) => {
  const { db, holder } = lockableDatabase(t, 'wait.db', 5);
  holder.exec('BEGIN IMMEDIATE');
  const writes = new GroupCommit(db);
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  const first = writes.run(() => insert.run(1).changes);
  // While it waits, timers fire on time: nothing holds the event loop for longer than the 5 ms busy timeout.
  let worstLateMs = 0;
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 10));
    worstLateMs = Math.max(worstLateMs, performance.now() - started - 10);
  }
  const second = writes.run(() => insert.run(2).changes);
  holder.exec('COMMIT');
  assert.deepEqual(await Promise.all([first, second]), [1, 1]);
  // A write that waited on the loop would hold it until the holder's COMMIT, which comes after these timers:
  // 10 s, its lock wait. Other files on both cores made one 10 ms timer fire 72.6 ms late by scheduling alone.
  assert.ok(worstLateMs < 1000, `a timer fired ${worstLateMs.toFixed(1)} ms late`);
  assert.deepEqual(db.prepare('SELECT x FROM t ORDER BY x').pluck().all(), [1, 2]);
});

test('sqlite: with write turns, a batch waits for its turn, takes what queued meanwhile, and gives the turn back', async (t) => {
  const { db } = lockableDatabase(t, 'turns.db', 5);
  const calls: string[] = [];
  let grant: (() => void) | undefined;
  const turns: WriteTurns = {
    request(granted) {
      calls.push('request');
      grant = granted;
    },
    release() {
      calls.push(`release after ${db.prepare('SELECT count(*) FROM t').pluck().get()} rows`);
    },
  };
  const writes = new GroupCommit(db, { turns });
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  const first = writes.run(() => insert.run(1).changes);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const second = writes.run(() => insert.run(2).changes);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(calls, ['request'], 'one request, however many writes wait');
  assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), 0, 'nothing written before the turn');
  grant?.();
  assert.deepEqual(await Promise.all([first, second]), [1, 1]);
  assert.deepEqual(calls, ['request', 'release after 2 rows'], 'one batch, the turn given back once committed');
  const third = writes.run(() => insert.run(3).changes);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(calls.slice(2), ['request'], 'the next batch asks again');
  grant?.();
  assert.equal(await third, 1);
  assert.deepEqual(calls.slice(2), ['request', 'release after 3 rows']);
});

test('sqlite: the change token moves with every commit, by this store, another process or after a WAL restart, and only then', async (t) => {
  const path = join(tempDir(t), 'token.db');
  const store = SqliteStore.open(path);
  t.after(() => store.close());
  const other = new Database(path);
  t.after(() => other.close());
  const moved = async (write: () => unknown): Promise<boolean> => {
    const before = await store.changeToken();
    await write();
    return (await store.changeToken()) !== before;
  };

  assert.equal(await store.changeToken(), await store.changeToken(), 'no commit, no change');
  assert.equal(await moved(() => other.prepare('SELECT count(*) FROM pets').get()), false, 'a read is not a commit');
  assert.ok(await moved(() => store.pets.create({ name: 'own', categoryId: 1, status: 'available' })));
  assert.ok(
    await moved(() => other.prepare("INSERT INTO pets (name, category_id, status) VALUES ('b', 1, 'sold')").run()),
  );
  // A checkpoint that empties the WAL, then a commit that starts it over from its first frame.
  other.pragma('wal_checkpoint(TRUNCATE)');
  assert.ok(await moved(() => other.prepare("UPDATE pets SET status = 'pending' WHERE name = 'b'").run()));
  // Another process: a connection this process knows nothing of.
  const script = `new (require('better-sqlite3'))(process.argv[1]).prepare("INSERT INTO pets (name, category_id, status) VALUES ('c', 1, 'sold')").run()`;
  assert.ok(await moved(() => execFileSync(process.execPath, ['-e', script, path])));
  assert.equal(await store.changeToken(), await store.changeToken());
});

test('sqlite: the change token through a symbolic link, with two stores on one file, and after close', async (t) => {
  const dir = tempDir(t);
  const real = join(dir, 'real.db');
  const link = join(dir, 'link.db');
  const first = SqliteStore.open(real);
  symlinkSync(real, link);
  // SQLite resolves the link: its -shm file is beside real.db, and a stale one beside the link must not matter.
  writeFileSync(`${link}-shm`, Buffer.alloc(96));
  const second = SqliteStore.open(link);
  t.after(() => second.close());
  const before = await second.changeToken();
  assert.equal(await second.changeToken(), before, 'no commit, no change: the live header is read');
  await first.pets.create({ name: 'a', categoryId: 1, status: 'available' });
  assert.notEqual(await second.changeToken(), before, 'a commit through the other store is seen');
  // Closing one store leaves the other's token working.
  await first.close();
  const after = await second.changeToken();
  await second.pets.create({ name: 'b', categoryId: 1, status: 'available' });
  assert.notEqual(await second.changeToken(), after);
  await assert.rejects(first.changeToken(), StoreUnavailableError);
});
