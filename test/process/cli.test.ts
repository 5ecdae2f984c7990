import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { outputClosed } from '../../dev/child-exit.js';
import { type CliResult, runCli } from '../../dev/petstore-cli.js';
import { formatFailure } from '../../src/commands/failure-message.js';
import { REQUEST_DRAIN_MS } from '../../src/server/graceful-close.js';
import { expectError, request } from '../helpers/calls.js';
import { bodyOf, openConnection } from '../helpers/keep-alive.js';
import { cliEnv, firstKey, KEY_PATTERN, startServe } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { certificate } from '../helpers/tls.js';

const KEY_LINE = /^psk_[0-9A-Za-z]{36}\n$/;
const ONE_ERROR_LINE = /^petstore: [^\n]+\n$/;
/** What `migrate` prints when it applied migrations: which, and the version the schema is at. */
const APPLIED = /^applied migrations ([\d, ]+): sqlite schema now at version (\d+)\n$/;
const NEW_PET = { name: 'Rex', categoryId: 1 };

/** A fresh database file in a temp dir and the environment to run the CLI on it. */
function freshDb(t: TestContext, extra: Record<string, string> = {}) {
  const path = join(tempDir(t), 'petstore.db');
  return { path, env: cliEnv(path, extra) };
}

function show(result: CliResult): string {
  return `exit ${result.code} signal ${result.signal}\nstdout: ${JSON.stringify(result.stdout)}\nstderr: ${JSON.stringify(result.stderr)}`;
}

function assertOk(result: CliResult): void {
  assert.equal(result.code, 0, show(result));
  assert.equal(result.stderr, '', show(result));
}

/** A failed command: non-zero exit, one "petstore: " line on stderr, nothing on stdout. */
function assertFailed(result: CliResult, message?: RegExp): void {
  assert.ok(result.code !== null && result.code !== 0, `expected a non-zero exit\n${show(result)}`);
  assert.match(result.stderr, ONE_ERROR_LINE, show(result));
  assert.equal(result.stdout, '', show(result));
  if (message !== undefined) assert.match(result.stderr, message, show(result));
}

async function createKey(env: NodeJS.ProcessEnv, name: string, ...options: string[]): Promise<string> {
  const result = await runCli(['keys', 'create', '--name', name, ...options], env);
  assertOk(result);
  assert.match(result.stdout, KEY_LINE, show(result));
  return result.stdout.trim();
}

async function listKeys(env: NodeJS.ProcessEnv): Promise<any[]> {
  const result = await runCli(['keys', 'list', '--json'], env);
  assertOk(result);
  return JSON.parse(result.stdout);
}

function keysIn(text: string): string[] {
  return text.match(KEY_PATTERN) ?? [];
}

/** The line of `keys list` output that names this key (names are unique among the keys these tests create). */
function listLine(listing: string, name: string): string {
  const line = listing.split('\n').find((l) => l.split(/\s+/)[1] === name);
  assert.ok(line !== undefined, `no line for ${name} in\n${listing}`);
  return line;
}

describe('petstore CLI (node dist/cli.js)', () => {
  test('keys create prints the key alone; a running server accepts it; revoke by name or id takes effect at once', async (t) => {
    const { env } = freshDb(t);
    const created = await runCli(['keys', 'create', '--name', 'ci'], env);
    assertOk(created);
    assert.match(created.stdout, KEY_LINE, show(created));
    const ci = created.stdout.trim();

    const server = await startServe(t, env);
    assert.deepEqual(keysIn(server.stdout() + server.stderr()), [], 'a key existed, so serve must not print one');
    assert.equal((await request(server.url, 'GET', '/v1/pets', { key: ci })).status, 200);

    // A key created while the server runs works at once too.
    const other = await createKey(env, 'ci-2');
    assert.equal((await request(server.url, 'GET', '/v1/pets', { key: other })).status, 200);

    const revoked = await runCli(['keys', 'revoke', 'ci'], env);
    assertOk(revoked);
    assert.match(revoked.stdout, /revoked/);
    const refused = await request(server.url, 'GET', '/v1/pets', { key: ci });
    expectError(refused, 401, 'unauthorized');
    assert.equal((await request(server.url, 'GET', '/v1/pets', { key: other })).status, 200, 'only "ci" is revoked');

    const id = (await listKeys(env)).find((key) => key.name === 'ci-2')?.id;
    assert.ok(Number.isSafeInteger(id));
    const byId = await runCli(['keys', 'revoke', String(id)], env);
    assertOk(byId);
    expectError(await request(server.url, 'GET', '/v1/pets', { key: other }), 401, 'unauthorized');

    // Revoking twice fails; the name of a revoked key can be reused, and the new key works.
    assertFailed(await runCli(['keys', 'revoke', 'ci'], env));
    const again = await createKey(env, 'ci');
    assert.notEqual(again, ci);
    assert.equal((await request(server.url, 'GET', '/v1/pets', { key: again })).status, 200);
    expectError(await request(server.url, 'GET', '/v1/pets', { key: ci }), 401, 'unauthorized');

    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  test('--scopes limits what a key may do; --expires must be a future date', async (t) => {
    const { env } = freshDb(t);
    const reader = await createKey(env, 'r', '--scopes', 'read');
    const writer = await createKey(env, 'w', '--scopes', 'write');
    const year = new Date().getUTCFullYear() + 1;
    const expiring = await createKey(env, 'later', '--expires', `${year}-06-30`);

    assertFailed(await runCli(['keys', 'create', '--name', 'past', '--expires', '2000-01-01'], env), /future/);
    assertFailed(await runCli(['keys', 'create', '--name', 'bad-date', '--expires', 'tomorrow'], env));

    const server = await startServe(t, env);
    assert.equal((await request(server.url, 'GET', '/v1/pets', { key: reader })).status, 200);
    expectError(await request(server.url, 'POST', '/v1/pets', { key: reader, body: NEW_PET }), 403, 'forbidden');
    expectError(await request(server.url, 'GET', '/v1/pets', { key: writer }), 403, 'forbidden');
    assert.equal((await request(server.url, 'POST', '/v1/pets', { key: writer, body: NEW_PET })).status, 201);
    assert.equal((await request(server.url, 'GET', '/v1/pets', { key: expiring })).status, 200);
    assert.equal((await request(server.url, 'POST', '/v1/pets', { key: expiring, body: NEW_PET })).status, 201);

    const listing = await runCli(['keys', 'list'], env);
    assertOk(listing);
    const line = listLine(listing.stdout, 'later');
    assert.match(line, /\bactive\b/);
    assert.match(line, new RegExp(`\\b${year}-06-30T00:00:00Z\\b`));
    assert.match(listLine(listing.stdout, 'r'), /\sread\s/);
    assert.match(listLine(listing.stdout, 'w'), /\swrite\s/);
    const json = await listKeys(env);
    assert.deepEqual(json.map((key) => key.name).sort(), ['later', 'r', 'w'], 'failed creates must store nothing');
    assert.equal(json.find((key) => key.name === 'later')?.expiresAt, `${year}-06-30T00:00:00.000Z`);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
  });

  test('keys list never shows a secret or its hash', async (t) => {
    const { env } = freshDb(t);
    const alpha = await createKey(env, 'alpha');
    const beta = await createKey(env, 'beta', '--scopes', 'read', '--owner', 'shop.example');
    assertOk(await runCli(['keys', 'revoke', 'beta'], env));

    /** No 12-character stretch of a secret beyond the shown prefix, nor its SHA-256, appears in the text. */
    const assertNoSecrets = (text: string) => {
      for (const key of [alpha, beta]) {
        assert.ok(!text.includes(key), `the key ${key} is shown`);
        for (let i = 4; i + 12 <= key.length; i++) {
          const piece = key.slice(i, i + 12);
          assert.ok(!text.includes(piece), `a piece of the key is shown: ${piece}`);
        }
        assert.ok(!text.includes(createHash('sha256').update(key).digest('hex')), 'the key hash is shown');
      }
      assert.deepEqual(keysIn(text), []);
    };

    const listing = await runCli(['keys', 'list'], env);
    assertOk(listing);
    assertNoSecrets(listing.stdout);
    assert.match(listLine(listing.stdout, 'alpha'), /^\d+\s+alpha\s+alpha\s.*\bread,webhooks,write\b.*\bactive\b/);
    assert.match(listLine(listing.stdout, 'beta'), /^\d+\s+beta\s+shop\.example\s/);
    assert.match(listLine(listing.stdout, 'beta'), /\brevoked\b/);

    const json = await runCli(['keys', 'list', '--json'], env);
    assertOk(json);
    assertNoSecrets(json.stdout);
    const keys = JSON.parse(json.stdout) as any[];
    assert.ok(Array.isArray(keys));
    assert.deepEqual(
      keys.map((key) => key.name),
      ['alpha', 'beta'],
    );
    for (const key of keys) {
      assert.ok(!('hash' in key), `hash field in ${JSON.stringify(key)}`);
      assert.ok(!/hash|secret/i.test(Object.keys(key).join()), `unexpected field in ${JSON.stringify(key)}`);
    }
    assert.equal(keys[0].revokedAt, null);
    assert.ok(typeof keys[1].revokedAt === 'string' && !Number.isNaN(Date.parse(keys[1].revokedAt)));
    assert.deepEqual(keys[1].scopes, ['read']);
    assert.deepEqual(
      keys.map((key) => key.owner),
      ['alpha', 'shop.example'],
    );
  });

  test('failures exit non-zero with one "petstore: " line on stderr and nothing on stdout', async (t) => {
    const { env } = freshDb(t);
    await createKey(env, 'dup');
    // Exit status 2 for a wrong command line, 1 for a failure while running (docs/operations.md, "Command line").
    const cases: [string, string[], NodeJS.ProcessEnv, number][] = [
      ['unknown command', ['frobnicate'], env, 2],
      ['keys create without --name', ['keys', 'create'], env, 2],
      ['--name without a value', ['keys', 'create', '--name'], env, 2],
      ['unknown scope', ['keys', 'create', '--name', 'x', '--scopes', 'root'], env, 2],
      ['an owner that breaks the rule', ['keys', 'create', '--name', 'x', '--owner', 'Big Corp'], env, 2],
      ['a name that is no owner, without --owner', ['keys', 'create', '--name', '_x'], env, 2],
      ['empty scopes', ['keys', 'create', '--name', 'x', '--scopes', ''], env, 2],
      ['a name of digits only', ['keys', 'create', '--name', '123'], env, 2],
      ['an impossible expiry date', ['keys', 'create', '--name', 'x', '--expires', '2027-02-30'], env, 2],
      ['an expiry time without a zone', ['keys', 'create', '--name', 'x', '--expires', '2099-06-01T12:00'], env, 2],
      ['a past expiry', ['keys', 'create', '--name', 'x', '--expires', '2000-01-01'], env, 2],
      ['duplicate active name', ['keys', 'create', '--name', 'dup'], env, 1],
      ['revoke an unknown key', ['keys', 'revoke', 'nosuch'], env, 1],
      ['revoke an unknown id', ['keys', 'revoke', '999'], env, 1],
      ['revoke without a target', ['keys', 'revoke'], env, 2],
      ['unknown keys subcommand', ['keys', 'frob'], env, 2],
      ['keys without subcommand', ['keys'], env, 2],
      ['unknown option on create', ['keys', 'create', '--name', 'y', '--bogus'], env, 2],
      ['unknown option on list', ['keys', 'list', '--bogus'], env, 2],
      ['a near miss of an option', ['keys', 'create', '--name', 'z', '--scope', 'read'], env, 2],
      ['serve with an argument', ['serve', 'now'], env, 2],
      ['migrate with an argument', ['migrate', 'now'], env, 2],
      ['bad PORT', ['keys', 'list'], { ...env, PORT: 'abc' }, 1],
      ['bad PORT for serve', ['serve'], { ...env, PORT: 'abc' }, 1],
      ['bad LOG_LEVEL', ['migrate'], { ...env, LOG_LEVEL: 'loud' }, 1],
      ['unsupported DATABASE_URL', ['migrate'], { ...env, DATABASE_URL: 'mysql://localhost/pets' }, 1],
      ['sqlite:// with a host part', ['migrate'], { ...env, DATABASE_URL: 'sqlite://rel/x.db' }, 1],
      ['a PostgreSQL URL without its colon', ['serve'], { ...env, DATABASE_URL: 'postgres//u@127.0.0.1/test' }, 1],
      ['a retention shorter than the retries', ['serve'], { ...env, EVENT_RETENTION_DAYS: '1' }, 1],
    ];
    // Four at a time: all at once, on 2 busy cores, one took longer than runCli's 20 s and was killed.
    const results: CliResult[] = [];
    for (let start = 0; start < cases.length; start += 4) {
      const batch = cases.slice(start, start + 4);
      results.push(...(await Promise.all(batch.map(([, args, caseEnv]) => runCli(args, caseEnv)))));
    }
    for (const [i, [label]] of cases.entries()) {
      const result = results[i] as CliResult;
      try {
        assertFailed(result);
        assert.equal(result.code, cases[i]?.[3], 'exit status');
      } catch (error) {
        throw new Error(`${label}: ${(error as Error).message}`);
      }
    }
    const nearMiss = results[cases.findIndex(([label]) => label === 'a near miss of an option')] as CliResult;
    assert.match(nearMiss.stderr, /^petstore: unknown option "--scope"; did you mean "--scopes"\?\n$/);
    const bogus = results[cases.findIndex(([label]) => label === 'unknown option on create')] as CliResult;
    assert.match(bogus.stderr, /^petstore: unknown option "--bogus"; it takes --name, --owner, --scopes, --expires\n$/);
    // A second key of the same name says the rule and the way out (docs/consumers.md's KEY=$(…) relies on the exit status).
    const duplicate = results[cases.findIndex(([label]) => label === 'duplicate active name')] as CliResult;
    assert.match(
      duplicate.stderr,
      /"dup" already exists: names are unique among active keys; .*"petstore keys revoke dup"/,
    );
    // A retention that the retry schedule outlasts: one line naming both settings and their values.
    const retention = results[cases.findIndex(([label]) => label === 'a retention shorter than the retries')];
    assert.match(
      retention?.stderr ?? '',
      /^petstore: EVENT_RETENTION_DAYS must be at least 2 to outlast WEBHOOK_RETRY_SCHEDULE=5s,5m,30m,2h,5h,10h,10h .*WEBHOOK_TIMEOUT_MS=10000, got "1"\n$/,
    );
    assert.deepEqual(
      (await listKeys(env)).map((key) => `${key.name}:${key.revokedAt === null ? 'active' : 'revoked'}`),
      ['dup:active'],
      'failed commands must change nothing',
    );
  });

  test('every command brings a fresh database up to date by itself', async (t) => {
    const dir = tempDir(t);
    const nested = join(dir, 'not', 'yet', 'there', 'petstore.db');
    const listed = await runCli(['keys', 'list'], cliEnv(nested));
    assertOk(listed);
    assert.match(listed.stdout, /^ID\s+NAME/);
    assert.ok(existsSync(nested));

    // sqlite:PATH and the bare path are the same database.
    const viaUrl = join(dir, 'url', 'petstore.db');
    await createKey(cliEnv(`sqlite:${viaUrl}`), 'via-url');
    assert.deepEqual(
      (await listKeys(cliEnv(viaUrl))).map((key) => key.name),
      ['via-url'],
    );

    // migrate says what it applied: every migration on a fresh database, nothing the second time.
    const migrated = cliEnv(join(dir, 'migrate.db'));
    const first = await runCli(['migrate'], migrated);
    assertOk(first);
    const [, versions = '', latest] = APPLIED.exec(first.stdout) ?? [];
    assert.equal(versions, Array.from({ length: Number(latest) }, (_, i) => i + 1).join(', '), first.stdout);
    const again = await runCli(['migrate'], migrated);
    assertOk(again);
    assert.equal(again.stdout, `sqlite schema up to date (version ${latest})\n`);
    // A database another command already brought up to date: nothing to apply either.
    assert.match((await runCli(['migrate'], cliEnv(nested))).stdout, /^sqlite schema up to date/);

    // Two migrations racing on each of three fresh files: all succeed, and exactly one of each pair applies.
    const racing = await Promise.all(
      [0, 0, 1, 1, 2, 2].map((n) => runCli(['migrate'], cliEnv(join(dir, `race-${n}`, 'petstore.db')))),
    );
    for (const result of racing) assertOk(result);
    for (let pair = 0; pair < racing.length; pair += 2) {
      const outputs = racing.slice(pair, pair + 2).map((result) => result.stdout);
      assert.equal(outputs.filter((output) => APPLIED.test(output)).length, 1, outputs.join(''));
    }
    // And two key creations racing on a fresh file both land.
    const race = cliEnv(join(dir, 'race-keys.db'));
    const [a, b] = await Promise.all([
      runCli(['keys', 'create', '--name', 'a'], race),
      runCli(['keys', 'create', '--name', 'b'], race),
    ]);
    for (const result of [a, b] as CliResult[]) {
      assertOk(result);
      assert.match(result.stdout, KEY_LINE);
    }
    assert.deepEqual((await listKeys(race)).map((key) => key.name).sort(), ['a', 'b']);
  });

  test('first start prints one working key, once; two first starts at once make one key', async (t) => {
    const { env } = freshDb(t);
    const first = await startServe(t, env);
    // On stderr, apart from the log lines on stdout, which a log collector keeps.
    const key = await firstKey(first);
    assert.equal(keysIn(first.stderr()).length, 1, first.stderr());
    assert.match(first.stderr(), /No API keys existed, so petstore created one/);
    // The quick start shows the message whole, with a sample key in place of this one.
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const sample = /psk_[0-9A-Za-z]{36}/.exec(readme)?.[0] ?? 'no sample key';
    assert.ok(readme.includes(`\`\`\`${first.stderr().replace(key, sample).trimEnd()}\n\`\`\``), first.stderr());
    assert.deepEqual(keysIn(first.stdout()), [], 'the key is not in the log stream');
    assert.equal((await request(first.url, 'GET', '/v1/pets', { key })).status, 200);
    assert.equal((await request(first.url, 'POST', '/v1/pets', { key, body: NEW_PET })).status, 201);
    assert.deepEqual(await first.stop(), { code: 0, signal: null });
    assert.equal(keysIn(first.stdout() + first.stderr()).length, 1);

    const second = await startServe(t, env);
    assert.deepEqual(keysIn(second.stdout() + second.stderr()), [], 'the second start must not print a key');
    assert.equal((await request(second.url, 'GET', '/v1/pets', { key })).status, 200);
    assert.deepEqual(await second.stop(), { code: 0, signal: null });
    assert.deepEqual(
      (await listKeys(env)).map((k) => k.name),
      ['first-key'],
    );

    const twin = freshDb(t);
    const both = await Promise.all([startServe(t, twin.env), startServe(t, twin.env)]);
    await Promise.any(both.map(firstKey));
    const keys = both.flatMap((server) => keysIn(server.stdout() + server.stderr()));
    assert.equal(keys.length, 1, `exactly one first key between both:\n${both.map((s) => s.stderr()).join('\n')}`);
    for (const server of both) {
      assert.equal((await request(server.url, 'GET', '/v1/pets', { key: keys[0] as string })).status, 200);
    }
    for (const exit of await Promise.all(both.map((server) => server.stop()))) {
      assert.deepEqual(exit, { code: 0, signal: null });
    }
    assert.equal((await listKeys(twin.env)).length, 1);
  });

  describe('graceful shutdown', () => {
    async function startWithKey(t: TestContext) {
      const { env } = freshDb(t);
      // Issued beforehand, so the server prints no first key and its stderr stays empty.
      const key = await createKey(env, 'drain');
      const server = await startServe(t, env);
      return { server, key, env };
    }

    test('SIGTERM during a burst of requests: exit 0, every answer is 2xx or 503 service_unavailable', async (t) => {
      const { server, key, env } = await startWithKey(t);
      // Warm up so that code paths are ready and the burst is really in flight when the signal lands.
      assert.equal((await request(server.url, 'POST', '/v1/pets', { key, body: NEW_PET })).status, 201);

      let firstAnswer = () => {};
      const answered = new Promise<void>((resolve) => {
        firstAnswer = resolve;
      });
      const burst = Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0
          ? request(server.url, 'GET', '/v1/pets?limit=100', { key })
          : request(server.url, 'POST', '/v1/pets', { key, body: { name: `pet-${i}`, categoryId: 1 } })
        ).then(
          (result) => {
            firstAnswer();
            return { result };
          },
          (error: unknown) => {
            firstAnswer();
            return { error };
          },
        ),
      );
      // The signal lands while the rest of the burst is still on its way.
      await answered;
      const exit = server.stop('SIGTERM').then((status) => ({ status, at: Date.now() }));
      const outcomes = await Promise.all(burst);
      const exited = await exit;
      assert.deepEqual(exited.status, { code: 0, signal: null }, server.stdout() + server.stderr());

      // Requests that got no answer at all (connection refused or reset before any byte) are allowed:
      // those still in the listen backlog when the socket closes are reset by the kernel.
      const tally = { ok: 0, created: 0, unavailable: 0, noAnswer: 0 };
      for (const outcome of outcomes) {
        if ('error' in outcome) {
          tally.noAnswer++;
          continue;
        }
        const { result } = outcome;
        if (result.status >= 200 && result.status < 300) {
          tally.ok++;
          if (result.status === 201) tally.created++;
        } else {
          expectError(result, 503, 'service_unavailable');
          tally.unavailable++;
        }
      }
      t.diagnostic(`burst: ${JSON.stringify(tally)}`);
      assert.doesNotMatch(server.stdout(), /"level":50|internal error/, 'no request failed inside the server');
      const lastLine = JSON.parse(server.stdout().trimEnd().split('\n').at(-1) as string);
      assert.deepEqual(
        [lastLine.msg, lastLine.signal],
        ['stopped', 'SIGTERM'],
        'the last log line says the stop completed',
      );
      // Nothing keeps the process once it has stopped (a ceiling: a 2 s timer of the webhook dispatcher's stop
      // used to outlive it). It exits at once: 0.07–0.36 s on a loaded machine, where a natural exit's freeing
      // of V8's heap took up to 1.5 s, but as little as 0.13 s on a quieter one: no tighter bound tells them apart.
      assert.ok(exited.at - lastLine.time < 1500, `exited ${exited.at - lastLine.time} ms after "stopped"`);

      // Every 201 was stored, and nothing was stored for a request that got no 201.
      const restarted = await startServe(t, env);
      const pets = await request(restarted.url, 'GET', '/v1/pets?limit=100', { key });
      assert.equal(pets.status, 200);
      assert.equal((pets.json as unknown[]).length, 1 + tally.created);
      assert.deepEqual(await restarted.stop(), { code: 0, signal: null });
    });

    test('a request in flight when SIGTERM arrives is answered before the process exits', async (t) => {
      const { server, key } = await startWithKey(t);
      const body = JSON.stringify(NEW_PET);
      const { port } = new URL(server.url);
      let response: http.IncomingMessage | undefined;
      const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/pets',
            agent: false,
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            response = res;
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              text += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        // Half the body now, the rest after SIGTERM.
        req.write(body.slice(0, 5));
        setTimeout(() => {
          server.child.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(5)), 300);
        }, 200);
      });
      const result = await answered;
      assert.equal(result.status, 201, result.text);
      assert.equal(JSON.parse(result.text).name, NEW_PET.name);
      assert.ok(response !== undefined);
      assert.deepEqual(await server.exit, { code: 0, signal: null });
    });

    test('a request stalled mid-body at SIGTERM is cut off: the stop still ends with "stopped", exit 0', async (t) => {
      const { server, key } = await startWithKey(t);
      const connection = await openConnection(Number(new URL(server.url).port));
      const body = JSON.stringify(NEW_PET);
      // The 100 Continue says the server has the request, so the signal finds it in flight.
      const continued = new Promise<void>((resolve) => {
        connection.socket.on('data', (chunk: Buffer) => {
          if (chunk.toString('latin1').startsWith('HTTP/1.1 100 ')) resolve();
        });
      });
      connection.socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      );
      await continued;
      // Part of the body, and then nothing: the client stalls.
      connection.socket.write(body.slice(0, 5));
      const termAt = Date.now();
      server.child.kill('SIGTERM');
      const exit = await server.exit;
      const took = Date.now() - termAt;
      // 'exit' can come before the pipes have drained: the last lines may still be on their way.
      await outputClosed(server.child);
      t.diagnostic(`the process ended ${took} ms after SIGTERM`);
      assert.deepEqual(exit, { code: 0, signal: null }, server.stdout() + server.stderr());
      const lines = server
        .stdout()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.deepEqual([lines.at(-1).msg, lines.at(-1).signal], ['stopped', 'SIGTERM']);
      const cut = lines.filter((line) => line.msg === 'stop cut off requests still in flight');
      assert.deepEqual(
        cut.map((line) => [line.level, line.requests]),
        [[40, 1]],
        'a warning says how many it cut off',
      );
      await connection.closed;
      // It used to take the whole 10 s bound and exit 1; a ceiling a busy machine meets.
      assert.ok(took < REQUEST_DRAIN_MS + 3000, `the stop took ${took} ms`);
    });

    test('requests on idle keep-alive connections right after SIGTERM get 503 and Connection: close', async (t) => {
      const { server, key } = await startWithKey(t);
      const port = Number(new URL(server.url).port);
      const list = `GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`;
      const create = (i: number) => {
        const body = JSON.stringify({ name: `after-term-${i}`, categoryId: 1 });
        return (
          `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
        );
      };
      const connections = await Promise.all(Array.from({ length: 20 }, () => openConnection(port)));
      for (const connection of connections) assert.match(await connection.exchange(list), /^HTTP\/1\.1 200 /);
      // Every connection is idle and open when the stop begins; the requests follow it at once.
      const termAt = Date.now();
      server.child.kill('SIGTERM');
      while (!server.stdout().includes('"msg":"stopping"')) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const answers = await Promise.all(
        connections.map((connection, i) =>
          connection.exchange(i % 2 === 0 ? list : create(i)).catch((error: Error) => error.message),
        ),
      );
      for (const answer of answers) {
        assert.match(answer, /^HTTP\/1\.1 503 /);
        assert.match(answer, /\r\nconnection: close\r\n/i);
        assert.match(answer, /\r\nretry-after: 1\r\n/i);
        assert.equal(bodyOf(answer).code, 'service_unavailable');
      }
      await Promise.all(connections.map((connection) => connection.closed));
      assert.deepEqual(await server.exit, { code: 0, signal: null }, server.stdout() + server.stderr());
      const stopMs = Date.now() - termAt;
      t.diagnostic(`20 of 20 answered 503; the process ended ${stopMs} ms after SIGTERM`);
      // A ceiling a busy machine meets (3.1 s seen with other suites on both cores), far below the 65 s an
      // idle keep-alive connection would hold the process for.
      assert.ok(stopMs < 15_000, `the stop took ${stopMs} ms`);
    });

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      test(`${signal} on an idle server: exit 0, not held by an idle keep-alive connection`, async (t) => {
        const { server, key } = await startWithKey(t);
        // An idle keep-alive connection must not hold the process open.
        assert.equal((await request(server.url, 'GET', '/v1/pets', { key })).status, 200);
        const started = Date.now();
        const exit = await server.stop(signal);
        const elapsed = Date.now() - started;
        assert.deepEqual(exit, { code: 0, signal: null }, server.stdout() + server.stderr());
        // Idle keep-alive lasts 65 s; a busy machine took 6.8 s to stop.
        assert.ok(elapsed < 15_000, `took ${elapsed} ms`);
        assert.equal(server.stderr(), '');
      });
    }
  });

  test('a start-up failure is told whole: every line of the message and each cause, no stack', async (t) => {
    const dir = tempDir(t);
    // Stands in for better-sqlite3 compiled for another Node.js: the loader's own words, whose last line
    // says what to do. A module hook puts it in place of the real module.
    const loaderError = [
      "The module '/srv/petstore/node_modules/better-sqlite3/build/Release/better_sqlite3.node'",
      'was compiled against a different Node.js version using',
      'NODE_MODULE_VERSION 137. This version of Node.js requires',
      'NODE_MODULE_VERSION 115. Please try re-compiling or re-installing',
      'the module (for instance, using `npm rebuild` or `npm install`).',
    ];
    writeFileSync(
      join(dir, 'addon.mjs'),
      `export default class Database {
  constructor() {
    const cause = new Error('dlopen: symbol lookup error\\n(the second line of the cause)');
    throw Object.assign(new Error(${JSON.stringify(loaderError.join('\n'))}, { cause }), { code: 'ERR_DLOPEN_FAILED' });
  }
}
`,
    );
    writeFileSync(
      join(dir, 'hooks.mjs'),
      `export async function resolve(specifier, context, next) {
  if (specifier !== 'better-sqlite3') return next(specifier, context);
  return { url: new URL('./addon.mjs', import.meta.url).href, shortCircuit: true };
}
`,
    );
    writeFileSync(
      join(dir, 'register.mjs'),
      "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
    );
    const env = {
      ...cliEnv(join(dir, 'petstore.db')),
      NODE_OPTIONS: `--import=${pathToFileURL(join(dir, 'register.mjs'))}`,
    };
    for (const command of [['serve'], ['migrate']]) {
      const result = await runCli(command, env);
      assert.equal(result.code, 1, show(result));
      assert.equal(result.stdout, '');
      assert.equal(
        result.stderr,
        `petstore: ${loaderError.join('\n  ')}\n  caused by: dlopen: symbol lookup error\n  (the second line of the cause)\n`,
      );
    }
  });

  test('failure messages: an AggregateError names its errors; a long one is cut at 12 lines', () => {
    const refused = new AggregateError([
      new Error('connect ECONNREFUSED ::1:5432'),
      new Error('connect ECONNREFUSED 127.0.0.1:5432'),
    ]);
    assert.equal(
      formatFailure(refused),
      'petstore: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432\n',
    );
    const long = formatFailure(new Error(Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')));
    assert.equal(long.split('\n').length - 1, 12);
    assert.match(long, /^petstore: line 1\n {2}line 2\n[\s\S]* {2}line 11\n {2}… 19 more lines\n$/);
  });

  test('--version prints the package version alone and needs no database', async (t) => {
    const path = join(tempDir(t), 'petstore.db');
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const result = await runCli(['--version'], cliEnv(path, { PORT: 'abc' }));
    assertOk(result);
    assert.equal(result.stdout, `${manifest.version}\n`);
    assert.ok(!existsSync(path));
  });

  test('TLS files that cannot be used stop the start with one line naming the variable and the file', async (t) => {
    const dir = tempDir(t);
    const { certPath, keyPath } = certificate(t);
    const other = certificate(t);
    const text = join(dir, 'not-pem.txt');
    writeFileSync(text, 'not a PEM file\n');
    const missing = join(dir, 'missing.pem');
    const cases: [Record<string, string>, RegExp][] = [
      [{ TLS_CERT: text, TLS_KEY: keyPath }, new RegExp(`^petstore: TLS_CERT: ${text} is not a PEM certificate`)],
      [{ TLS_CERT: certPath, TLS_KEY: text }, new RegExp(`^petstore: TLS_KEY: ${text} is not an unencrypted PEM`)],
      [{ TLS_CERT: keyPath, TLS_KEY: keyPath }, new RegExp(`^petstore: TLS_CERT: ${keyPath} is not a PEM certificate`)],
      [
        { TLS_CERT: missing, TLS_KEY: keyPath },
        new RegExp(`^petstore: TLS_CERT: cannot read ${missing}: no such file`),
      ],
      [
        { TLS_CERT: certPath, TLS_KEY: missing },
        new RegExp(`^petstore: TLS_KEY: cannot read ${missing}: no such file`),
      ],
      [
        { TLS_CERT: certPath, TLS_KEY: other.keyPath },
        new RegExp(`^petstore: TLS_CERT ${certPath} and TLS_KEY ${other.keyPath} cannot be used together`),
      ],
    ];
    for (const [tls, message] of cases) {
      const result = await runCli(['serve'], cliEnv(join(dir, 'petstore.db'), tls));
      assertFailed(result, message);
      assert.equal(result.code, 1);
    }
  });

  test('no command at all is a usage error: the usage on stderr, exit 2', async () => {
    const result = await runCli([], cliEnv(':memory:'));
    assert.equal(result.code, 2, show(result));
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^petstore: a command is needed\nUsage: petstore <command>/);
  });

  test('--help exits 0, lists the commands and needs no database', async (t) => {
    const dir = tempDir(t);
    const path = join(dir, 'petstore.db');
    for (const flag of ['--help', '-h', 'help']) {
      const result = await runCli([flag], cliEnv(path, { PORT: 'abc' }));
      assertOk(result);
      for (const command of ['serve', 'migrate', 'keys create', 'keys list', 'keys revoke']) {
        assert.ok(result.stdout.includes(command), `${flag} does not mention ${command}:\n${result.stdout}`);
      }
    }
    assert.ok(!existsSync(path), '--help must not open the database');
    const keysHelp = await runCli(['keys', '--help'], cliEnv(path));
    assertOk(keysHelp);
    assert.match(keysHelp.stdout, /keys create --name NAME/);
  });

  test('a server that cannot listen does not use up the one-time first key', async (t) => {
    const { env } = freshDb(t);
    const holder = await startServe(t, freshDb(t).env);
    const port = new URL(holder.url).port;
    const failed = await runCli(['serve'], { ...env, PORT: port });
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^petstore: listen EADDRINUSE: .*; set PORT \(or HOST\) to a free one\n$/);
    assert.deepEqual(keysIn(failed.stdout + failed.stderr), [], 'no key may be printed by a server that did not start');
    await holder.stop();
    const started = await startServe(t, env);
    await firstKey(started);
    assert.equal(keysIn(started.stderr()).length, 1, 'the first key is still issued on the first real start');
    await started.stop();
  });
});
