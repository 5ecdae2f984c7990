import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { runCli } from '../../dev/petstore-cli.js';
import { createPgCluster, pgClusterUnavailable, postgresTool } from '../helpers/pg-cluster.js';
import { cliEnv, firstKey, startServe } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * `petstore restore FILE`, black-box: a backup made while the service ran, events made after it (then
 * lost), the service stopped and the backup restored. A receiver that deduplicates by webhook-id, as the
 * consumer guide (docs/consumers.md) advises, still gets every event made after the restore; the deliveries pending at the backup point
 * are sent; a feed cursor from before the backup point works and one from the lost history is 410.
 */

/** The cursor of the feed's `next` link after reading all of it. */
async function cursorAtEnd(url: string, key: string): Promise<string> {
  const response = await fetch(`${url}/v1/events?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(response.status, 200, await response.clone().text());
  const cursor = /[?&]cursor=([^&>]+)/.exec(response.headers.get('link') ?? '')?.[1];
  assert.ok(cursor !== undefined);
  return decodeURIComponent(cursor);
}

async function createPets(url: string, key: string, count: number, name: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${name} ${i}`, categoryId: 1 }),
    });
    assert.equal(response.status, 201);
  }
}

/**
 * A webhook receiver that answers 503 until `succeed()`, and keeps the webhook-id of every delivery it
 * accepted: the set a receiver that deduplicates would keep.
 */
async function dedupingReceiver(t: TestContext) {
  let failing = true;
  const accepted = new Set<string>();
  const receiver = await startReceiver(t, (_n, request) => {
    if (!failing) accepted.add(request.headers['webhook-id'] ?? '');
    return { status: failing ? 503 : 204 };
  });
  return {
    receiver,
    accepted,
    succeed: () => {
      failing = false;
    },
  };
}

/** Calls the API of the service now at `base()` with `key`. */
const caller = (base: () => string, key: string) => (method: string, path: string, body?: unknown) =>
  fetch(`${base()}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

function env(t: TestContext) {
  const dir = tempDir(t);
  const path = join(dir, 'petstore.db');
  return {
    dir,
    path,
    env: cliEnv(path, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s' }),
  };
}

/** How one store backs up and restores, for restoredScenario. */
interface Restoring {
  /** The environment of the service before the restore. */
  readonly env: NodeJS.ProcessEnv;
  /** Backs the running service's database up. */
  backUp(): Promise<void>;
  /** With the service running: what a restore attempted now says (SQLite refuses), if anything. */
  whileRunning?(): Promise<void>;
  /** With the service stopped: restores the backup; the environment of the service after it. */
  restore(): Promise<NodeJS.ProcessEnv>;
}

/**
 * The scenario both stores are held to: five pets whose deliveries are pending at the backup point, five
 * more after it (delivered, then lost), the restore, five new ones. A receiver that deduplicates gets every
 * new event, the pending ones are sent again, a cursor from before the backup point reads on into the new
 * events and one from the lost history is 410.
 */
async function restoredScenario(t: TestContext, restoring: Restoring): Promise<void> {
  const { receiver, accepted, succeed } = await dedupingReceiver(t);
  let server = await startServe(t, restoring.env);
  const key = await firstKey(server);
  const call = caller(() => server.url, key);
  assert.equal((await call('POST', '/v1/webhooks', { url: receiver.url, events: ['pet.created'] })).status, 201);
  await createPets(server.url, key, 5, 'kept');
  await receiver.until((got) => got.length >= 5, 5000);
  const beforeBackup = await cursorAtEnd(server.url, key);
  await restoring.backUp();

  // The history the restore will lose: delivered (the receiver keeps its ids), and read past by a cursor.
  succeed();
  await createPets(server.url, key, 5, 'lost');
  await receiver.until(() => accepted.size >= 10, 10_000);
  const lostCursor = await cursorAtEnd(server.url, key);
  const seenBefore = new Set(accepted);
  await restoring.whileRunning?.();
  await server.stop();
  const env = await restoring.restore();

  receiver.reset();
  server = await startServe(t, env);
  // The deliveries pending at the backup point go out again, under the ids they had.
  await receiver.until((got) => got.length >= 5, 10_000);
  await createPets(server.url, key, 5, 'new');
  await receiver.until((got) => got.length >= 10, 10_000);
  const ids = receiver.ids();
  const fresh = ids.filter((id) => !seenBefore.has(id));
  assert.equal(fresh.length, 5, `a receiver that deduplicates gets every new event: ${ids.join(', ')}`);
  assert.ok(
    fresh.every((id) => /^evt_\d{15}$/.test(id)),
    fresh.join(', '),
  );

  const kept = await call('GET', `/v1/events?cursor=${encodeURIComponent(beforeBackup)}`);
  assert.equal(kept.status, 200);
  assert.deepEqual(
    ((await kept.json()) as Array<{ id: string }>).map((event) => event.id),
    // In id order (ids of one width): deliveries go out in parallel, so they may arrive in another.
    [...fresh].sort(),
    'a cursor from before the backup point reads on, into the new events',
  );
  const lost = await call('GET', `/v1/events?cursor=${encodeURIComponent(lostCursor)}`);
  assert.equal(lost.status, 410);
  assert.deepEqual(await lost.json(), {
    code: 'gone',
    status: 410,
    message:
      'the database was restored from a backup made before this cursor: the events after it were lost; ' +
      'read the feed again without a cursor',
  });
  await server.stop();
}

describe('petstore restore', () => {
  test('SQLite: backup, then restore: no event reuses an id; pending deliveries sent; lost cursors 410', async (t) => {
    const { dir, env: serveEnv } = env(t);
    const backup = join(dir, 'backup.db');
    await restoredScenario(t, {
      env: serveEnv,
      backUp: async () => assert.equal((await runCli(['backup', backup], serveEnv)).code, 0),
      whileRunning: async () => {
        const refused = await runCli(['restore', backup], serveEnv);
        assert.equal(refused.code, 1);
        assert.match(refused.stderr, /open in a running service: stop it first, then restore/);
      },
      restore: async () => {
        const restored = await runCli(['restore', backup], serveEnv);
        assert.equal(restored.code, 0, restored.stderr);
        assert.match(
          restored.stdout,
          /^restored .*backup\.db: events up to evt_\d+ kept, new ones from evt_\d{15}; 5 webhook deliveries pending will be sent; the database it replaced is kept as .*petstore\.db\.replaced-\d{8}T\d{6}Z\n$/,
        );
        assert.ok(readdirSync(dir).some((name) => /^petstore\.db\.replaced-/.test(name)));
        return serveEnv;
      },
    });
  });

  test('SQLite through links: the database goes where they point, the links stay links', async (t) => {
    // A deployment's layout: the configured path a link into a mounted volume, relative as an image makes it.
    const dir = tempDir(t);
    const volume = join(dir, 'volume');
    const app = join(dir, 'app');
    mkdirSync(volume);
    mkdirSync(app);
    const link = join(app, 'petstore.db');
    const pointsAt = join('..', 'volume', 'petstore.db');
    symlinkSync(pointsAt, link);
    const serveEnv = cliEnv(link);
    let server = await startServe(t, serveEnv);
    const key = await firstKey(server);
    const call = caller(() => server.url, key);
    await createPets(server.url, key, 1, 'backed up');
    const backup = join(dir, 'backup.db');
    assert.equal((await runCli(['backup', backup], serveEnv)).code, 0);
    await createPets(server.url, key, 1, 'lost');
    await server.stop();

    const restored = await runCli(['restore', backup], serveEnv);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(
      restored.stdout,
      /the database it replaced is kept as .*volume\/petstore\.db\.replaced-\d{8}T\d{6}Z\n$/,
    );
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link stays a link');
    assert.equal(readlinkSync(link), pointsAt, 'to the same place');
    assert.deepEqual(readdirSync(app), ['petstore.db'], 'nothing beside the link');

    server = await startServe(t, serveEnv);
    const pets = await call('GET', '/v1/pets');
    assert.deepEqual(
      ((await pets.json()) as Array<{ name: string }>).map((pet) => pet.name),
      ['backed up 0'],
    );
    await createPets(server.url, key, 1, 'after the restore');
    await server.stop();
    assert.deepEqual(readdirSync(app), ['petstore.db'], 'no -wal or -shm beside the link either');
    const onVolume = new Database(join(volume, 'petstore.db'), { readonly: true });
    const names = onVolume.prepare('SELECT name FROM pets ORDER BY id').pluck().all();
    onVolume.close();
    assert.deepEqual(names, ['backed up 0', 'after the restore 0'], 'a write after the restart is on the volume');

    // A link to a database not made yet (a new volume), reached through a linked directory.
    const fresh = join(app, 'fresh.db');
    symlinkSync(join('..', 'volume', 'fresh.db'), fresh);
    symlinkSync(app, join(dir, 'linked'));
    const first = await runCli(['restore', backup], cliEnv(join(dir, 'linked', 'fresh.db')));
    assert.equal(first.code, 0, first.stderr);
    assert.ok(lstatSync(fresh).isSymbolicLink(), 'a link to nothing yet stays a link too');
    assert.ok(lstatSync(join(volume, 'fresh.db')).isFile(), 'the database is where it points');
  });

  test('refused with one line, nothing replaced: damaged, newer, not petstore, not a file, PostgreSQL; --check says what', async (t) => {
    const { dir, path, env: serveEnv } = env(t);
    assert.equal((await runCli(['migrate'], serveEnv)).code, 0);
    const good = join(dir, 'good.db');
    assert.equal((await runCli(['backup', good], serveEnv)).code, 0);
    const checked = await runCli(['restore', '--check', good], serveEnv);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(
      checked.stdout,
      /good\.db can be restored: schema version \d+, events up to evt_0, 0 webhook deliveries pending\n$/,
    );

    const damaged = join(dir, 'damaged.db');
    copyFileSync(good, damaged);
    const bytes = Buffer.alloc(4096, 0x41);
    const fd = openSync(damaged, 'r+');
    writeSync(fd, bytes, 0, bytes.length, 4096);
    closeSync(fd);
    const newer = join(dir, 'newer.db');
    copyFileSync(good, newer);
    const db = new Database(newer);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)').run();
    db.close();
    const foreign = join(dir, 'foreign.db');
    new Database(foreign).exec('CREATE TABLE t (x)');
    const backups = join(dir, 'backups');
    mkdirSync(backups);
    // Copying one would wait for a writer forever.
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const text = join(dir, 'text.db');
    writeFileSync(text, 'not a database at all, just text long enough to have a header of sorts');
    const cases: Array<[string, RegExp]> = [
      [damaged, /damaged/],
      [
        newer,
        /was made by a newer petstore \(schema version 999; this one knows up to \d+\): restore it with that release/,
      ],
      [foreign, /is a SQLite database but not a petstore one/],
      [text, /is not a SQLite database/],
      [join(dir, 'missing.db'), /missing\.db: no such file/],
      [backups, /backups is a directory; give the backup file/],
      [fifo, /fifo is not a regular file; give the backup file/],
    ];
    const before = readdirSync(dir).sort();
    for (const [file, message] of cases) {
      for (const args of [
        ['restore', file],
        ['restore', '--check', file],
      ]) {
        const result = await runCli(args, serveEnv);
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      }
    }
    assert.deepEqual(readdirSync(dir).sort(), before, 'nothing replaced, nothing left behind');
    const intact = new Database(path, { readonly: true });
    assert.equal(intact.pragma('integrity_check', { simple: true }), 'ok');
    intact.close();

    const postgres = await runCli(['restore', good], cliEnv('postgres://postgres@127.0.0.1:5432/test'));
    assert.equal(postgres.code, 1);
    assert.match(postgres.stderr, /on PostgreSQL use pg_restore/);
    const usage = await runCli(['restore'], serveEnv);
    assert.equal(usage.code, 2);
  });

  test('PostgreSQL: pg_restore into another server, then restored: the same guarantees', {
    skip: pgClusterUnavailable(),
  }, async (t) => {
    const dump = join(tempDir(t), 'petstore.dump');
    const origin = await createPgCluster();
    t.after(() => origin.destroy());
    const extra = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s' };
    await restoredScenario(t, {
      env: cliEnv(origin.url, extra),
      backUp: async () => {
        execFileSync(postgresTool('pg_dump'), ['-Fc', '-d', origin.url, '-f', dump]);
      },
      restore: async () => {
        // A new server: its transaction ids are behind those the restored events were written in.
        const replacement = await createPgCluster();
        t.after(() => replacement.destroy());
        execFileSync(postgresTool('pg_restore'), ['--no-owner', '-d', replacement.url, dump]);
        const restoredEnv = cliEnv(replacement.url, extra);
        const marked = await runCli(['restored'], restoredEnv);
        assert.equal(marked.code, 0, marked.stderr);
        assert.match(
          marked.stdout,
          /^marked restored: events up to evt_\d+ kept, new ones from evt_\d{15}; 5 webhook deliveries pending will be sent\n$/,
        );
        return restoredEnv;
      },
    });
    const sqlite = await runCli(['restored'], cliEnv(join(tempDir(t), 'x.db')));
    assert.equal(sqlite.code, 1);
    assert.match(sqlite.stderr, /on SQLite, restore does it/);
  });
});
