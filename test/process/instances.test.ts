import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { describe, test } from 'node:test';
import { waitUntil } from '../../dev/eventually.js';
import { createKey, runCli } from '../../dev/petstore-cli.js';
import { request } from '../helpers/calls.js';
import { cliEnv, firstKey, freshDatabaseUrl, KEY_PATTERN, type ServeProcess, startServe } from '../helpers/process.js';
import { eachBackend } from '../helpers/stores.js';

/** A GET on a connection of its own, so the cluster's round robin hands each to the next worker. */
function rawGet(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

function nextLink(headers: Headers): string | undefined {
  return /<([^>]+)>; rel="next"/.exec(headers.get('link') ?? '')?.[1];
}

eachBackend((backend) => {
  describe(`several instances on one database [${backend.name}]`, () => {
    test('two processes behave as one service: unique ids, shared pages and cursors, revocation everywhere', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const servers: ServeProcess[] = await Promise.all([startServe(t, env), startServe(t, env)]);
      t.after(() => Promise.all(servers.map((server) => server.stop())));
      const key = await createKey(env, 'shared');
      const at = (i: number) => (servers[i % 2] as ServeProcess).url;

      const created = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          request(at(i), 'POST', '/v1/pets', { key, body: { name: `p${i}`, categoryId: 1 + (i % 3) } }),
        ),
      );
      assert.ok(created.every((result) => result.status === 201));
      const ids = created.map((result) => (result.json as { id: number }).id);
      assert.equal(new Set(ids).size, ids.length, 'ids are unique across instances');

      for (const id of ids.slice(0, 10)) {
        const [a, b] = await Promise.all(
          servers.map((server) => request(server.url, 'GET', `/v1/pets/${id}`, { key })),
        );
        assert.equal(a?.status, 200);
        assert.deepEqual(a?.json, b?.json);
      }

      const seen: number[] = [];
      let path: string | undefined = '/v1/pets?limit=7';
      for (let page = 0; path !== undefined; page++) {
        const result = await request(at(page), 'GET', path, { key });
        assert.equal(result.status, 200, result.text);
        seen.push(...(result.json as Array<{ id: number }>).map((pet) => pet.id));
        path = nextLink(result.headers);
      }
      assert.deepEqual(
        seen,
        [...ids].sort((x, y) => x - y),
        'pages alternating between instances see every pet once, in order',
      );

      const revoked = await runCli(['keys', 'revoke', 'shared'], env);
      assert.equal(revoked.code, 0, revoked.stderr);
      for (const server of servers) {
        assert.equal((await request(server.url, 'GET', '/v1/pets', { key })).status, 401);
      }
    });

    test('two processes: of 50 concurrent orders for one pet exactly one wins', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const servers: ServeProcess[] = await Promise.all([startServe(t, env), startServe(t, env)]);
      t.after(() => Promise.all(servers.map((server) => server.stop())));
      const key = await createKey(env, 'racer');
      const at = (i: number) => (servers[i % 2] as ServeProcess).url;
      const pet = (await request(at(0), 'POST', '/v1/pets', { key, body: { name: 'prize', categoryId: 1 } })).json as {
        id: number;
      };
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          request(at(i), 'POST', '/v1/store/orders', { key, body: { petId: pet.id } }),
        ),
      );
      assert.deepEqual(results.map((result) => result.status).sort(), [201, ...Array(49).fill(409)]);
      const orders = (await request(at(1), 'GET', '/v1/store/orders', { key })).json as unknown[];
      assert.equal(orders.length, 1);
      assert.equal(
        ((await request(at(1), 'GET', `/v1/pets/${pet.id}`, { key })).json as { status: string }).status,
        'pending',
      );
    });

    test('serve --workers 2: two worker processes share the port and stop together', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const server = await startServe(t, env, 45_000, ['--workers', '2']);
      const workers = execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.child.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.trim() !== '');
      assert.equal(workers.length, 2, 'two worker processes');
      const key = await firstKey(server);
      assert.equal(server.stderr().match(KEY_PATTERN)?.length, 1, 'the primary prints the first key once');
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          request(server.url, 'POST', '/v1/pets', { key, body: { name: `w${i}`, categoryId: 1 } }),
        ),
      );
      assert.ok(results.every((result) => result.status === 201));
      assert.equal(new Set(results.map((result) => (result.json as { id: number }).id)).size, 100);
      // A request's log line is written after its response, and reaches stdout through the primary: wait
      // for all 100 before asking which workers wrote them.
      const answered = () => server.stdout().match(/"pid":\d+[^\n]*"status":201/g) ?? [];
      await waitUntil(
        () => `one log line per request (${answered().length} of 100)`,
        () => answered().length >= 100,
        {
          timeoutMs: 10_000,
          everyMs: 50,
        },
      );
      assert.equal(answered().length, 100, 'one log line per request');
      const pids = new Set(answered().map((line) => line.split(',')[0]));
      assert.equal(pids.size, 2, 'both workers answered requests');
      // Each scrape lands on one worker, and reports both: the primary sums them.
      for (let i = 0; i < 4; i++) {
        const scrape = await rawGet(`${server.url}/metrics`);
        assert.match(scrape, /petstore_http_requests_total\{operation="createPet",status="201"\} 100\n/);
      }
      assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
    });

    test('serve --workers 2: a worker that dies is replaced and the service keeps answering', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const server = await startServe(t, env, 45_000, ['--workers', '2']);
      const key = await firstKey(server);
      const workers = () =>
        execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.child.pid)], { encoding: 'utf8' })
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line !== '');
      const [victim] = workers();
      process.kill(Number(victim), 'SIGKILL');
      await waitUntil(
        () => `a new worker in its place: ${workers().join(' ')} (victim ${victim})\n${server.stdout().slice(-600)}`,
        () => {
          const now = workers();
          return now.length === 2 && !now.includes(victim as string);
        },
        { timeoutMs: 10_000, everyMs: 100 },
      );
      for (let i = 0; i < 20; i++) {
        assert.equal((await request(server.url, 'GET', '/v1/pets', { key })).status, 200);
      }
      assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
    });

    test('a server that cannot listen exits non-zero promptly, with or without workers', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      const holder = await startServe(t, env);
      const port = new URL(holder.url).port;
      for (const args of [['serve'], ['serve', '--workers', '2']]) {
        const started = Date.now();
        const result = await runCli(args, { ...env, PORT: port }, { timeoutMs: 60_000 });
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, /EADDRINUSE|before it listened/);
        // A generous ceiling: three processes start here, which took 16 s with other suites on both cores;
        // a primary that respawned its workers for ever would not end at all.
        assert.ok(Date.now() - started < 30_000, `${args.join(' ')} took ${Date.now() - started} ms to give up`);
      }
    });

    test('serve --workers rejects a bad count', async (t) => {
      const env = cliEnv(await freshDatabaseUrl(t, backend));
      for (const count of ['0', '65', 'many', '']) {
        const result = await runCli(['serve', '--workers', count], env);
        assert.equal(result.code, 2, `--workers ${count}: ${result.stderr}`);
        assert.match(result.stderr, /^petstore: --workers takes a number from 1 to 64 or "auto"/);
      }
    });
  });
});
