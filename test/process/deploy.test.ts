import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join, posix } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readyUrl } from '../../dev/service-process.js';
import { SHUTDOWN_GRACE_MS } from '../../src/process/signals.js';
import { all, inContext, last, parseDockerfile, parseEnvFile, parseUnit, stageEnv } from '../helpers/deploy-files.js';
import { readyWithin } from '../helpers/patience.js';
import { sparePort } from '../helpers/pg-cluster.js';
import { KEY_PATTERN } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { certificate } from '../helpers/tls.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const docker = parseDockerfile(read('Dockerfile'));
const [build, runtime] = docker.stages as [(typeof docker.stages)[0], (typeof docker.stages)[0]];
const unit = parseUnit(read('deploy/petstore.service'));
const setting = (key: string) => unit.get(key)?.at(-1);

/** An exec-form instruction (`CMD ["node", "x"]`), as the argument list it runs. */
function execForm(args: string): string[] {
  const list = JSON.parse(args) as unknown;
  assert.ok(Array.isArray(list) && list.every((item) => typeof item === 'string'), `not exec form: ${args}`);
  return list;
}

const healthcheck = execForm(/CMD\s+(\[.*\])$/.exec(last(runtime, 'HEALTHCHECK'))?.[1] ?? '');

/** Runs `node …` with this environment (and the test's coverage collection) to its end; its exit code. */
async function run(command: string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  assert.equal(command[0], 'node');
  const child = spawn(process.execPath, command.slice(1), { cwd: ROOT, env: withCoverage(env), stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function withCoverage(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const coverage = process.env.NODE_V8_COVERAGE;
  return { PATH: process.env.PATH, ...(coverage === undefined ? {} : { NODE_V8_COVERAGE: coverage }), ...env };
}

/**
 * Starts `node …` from the checkout (the image's WORKDIR holds the same package.json, node_modules and
 * dist) with nothing but `env`, as a container or the unit would, and waits until it is ready.
 */
async function start(t: TestContext, command: string[], env: NodeJS.ProcessEnv) {
  assert.equal(command[0], 'node');
  const child = spawn(process.execPath, command.slice(1), { cwd: ROOT, env: withCoverage(env) });
  t.after(() => child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = { stdout: '', stderr: '' };
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const within = readyWithin(15_000);
    const timer = setTimeout(
      () => reject(new Error(`not ready in ${within / 1000} s:\n${output.stdout}${output.stderr}`)),
      within,
    );
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output.stdout += chunk;
      if (readyUrl(output.stdout) !== undefined) resolve(clearTimeout(timer));
    });
    exited.then((code) => reject(new Error(`exited ${code} before it was ready:\n${output.stdout}${output.stderr}`)));
  });
  return { child, exited, output };
}

/**
 * Starts `command` with `env`; checks the health check answers, that a request in flight at SIGTERM is
 * answered, and that the process then exits 0 and the health check fails.
 */
async function startAndStop(t: TestContext, command: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { child, exited, output } = await start(t, command, env);
  // No terminal: JSON log lines only on stdout; the first key of the fresh database on stderr (another pipe,
  // so it may come a moment after the ready line).
  for (const line of output.stdout.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line);
  assert.equal(output.stdout.match(KEY_PATTERN), null);
  for (let i = 0; i < 200 && output.stderr.match(KEY_PATTERN) === null; i++)
    await new Promise((r) => setTimeout(r, 10));
  assert.equal(await run(healthcheck, env), 0, 'the health check passes');

  const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
  const key = output.stderr.match(KEY_PATTERN)?.[0];
  assert.ok(key !== undefined, `no first key on stderr:\n${output.stderr}`);
  const answered = new Promise<number>((resolve, reject) => {
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': body.length,
    };
    const request = http.request(
      { host: '127.0.0.1', port: env.PORT, method: 'POST', path: '/v1/pets', agent: false, headers },
      (response) => response.resume().on('end', () => resolve(response.statusCode ?? 0)),
    );
    request.on('error', reject);
    request.write(body.slice(0, 5));
    setTimeout(() => {
      child.kill('SIGTERM');
      setTimeout(() => request.end(body.slice(5)), 300);
    }, 200);
  });
  assert.equal(await answered, 201, 'the request in flight at SIGTERM is answered');
  assert.equal(await exited, 0, output.stdout + output.stderr);
  assert.match(output.stdout, /"signal":"SIGTERM","msg":"stopping"/);
  assert.notEqual(await run(healthcheck, env), 0, 'the health check fails once it stopped');
}

describe('Dockerfile', () => {
  test('builds, from the files the build context keeps, what its CMD and HEALTHCHECK run', () => {
    const dockerignore = read('.dockerignore');
    assert.deepEqual(docker.args, [{ op: 'ARG', args: 'NODE_VERSION=22' }]);
    assert.equal(build.name, 'build');
    assert.equal(runtime.from, build.from, 'one base image: the native module built in one runs in the other');
    assert.equal(last(build, 'WORKDIR'), '/app');
    for (const copy of all(build, 'COPY')) {
      for (const source of copy.split(/\s+/).slice(0, -1)) {
        assert.ok(existsSync(join(ROOT, source)), `${source} exists`);
        assert.ok(inContext(dockerignore, source), `${source} is in the build context`);
      }
    }
    // npm ci runs prepare, which compiles with tsconfig.build.json: src/ into dist/; then the portal's page,
    // from src/portal/page/ alone (its tsconfig, HTML and CSS are there), so the image's src/ holds it all.
    const manifest = JSON.parse(read('package.json'));
    assert.equal(manifest.scripts.prepare, 'npm run build');
    assert.equal(manifest.scripts.build, 'tsc -p tsconfig.build.json && npm run build:portal');
    for (const file of manifest.scripts['build:portal'].match(/(?<=')src\/[^']+|src\/\S+\.json/g) ?? []) {
      assert.ok(existsSync(join(ROOT, file.replace(/\/$/, ''))), `${file} exists`);
    }
    assert.match(manifest.scripts['build:portal'], /tsc -p src\/portal\/page\/tsconfig\.json/);
    const tsconfig = JSON.parse(read('tsconfig.build.json'));
    assert.deepEqual(
      [tsconfig.extends, tsconfig.include, tsconfig.compilerOptions.outDir],
      ['./tsconfig.json', ['src'], 'dist'],
    );
    assert.ok(!inContext(dockerignore, 'node_modules') && !inContext(dockerignore, 'dist'), 'built in the image');

    assert.deepEqual(all(runtime, 'COPY'), [
      '--from=build /app/package.json ./',
      '--from=build /app/node_modules ./node_modules',
      '--from=build /app/dist ./dist',
    ]);
    assert.equal(last(runtime, 'WORKDIR'), '/app');
    const command = execForm(last(runtime, 'CMD'));
    assert.deepEqual(command, ['node', 'dist/cli.js', 'serve']);
    assert.equal(manifest.bin.petstore, command[1], 'the bin npm would run');
    assert.ok(existsSync(join(ROOT, 'src/cli.ts')) && existsSync(join(ROOT, command[1] as string)));
    assert.deepEqual(healthcheck.slice(0, 2), ['node', '-e']);
    assert.equal(last(runtime, 'STOPSIGNAL'), 'SIGTERM');
    assert.equal(last(runtime, 'USER'), 'node', 'not root');
    assert.deepEqual(all(runtime, 'ENTRYPOINT'), [], "the base image's entrypoint runs CMD as it is");
  });

  test('its CMD with its ENV serves on the volume, passes the health check, and drains on SIGTERM', async (t) => {
    const env = stageEnv(runtime);
    assert.equal(env.HOST, '0.0.0.0', 'reachable from outside the container');
    assert.equal(last(runtime, 'EXPOSE'), env.PORT);
    const volume = JSON.parse(last(runtime, 'VOLUME')) as string[];
    assert.ok(volume.includes(posix.dirname(env.DATABASE_URL as string)), 'the SQLite file is on the volume');
    // The volume's path under a temp dir, and a free port in place of 8080.
    const database = join(tempDir(t), env.DATABASE_URL as string);
    await startAndStop(t, execForm(last(runtime, 'CMD')), {
      ...env,
      PORT: String(await sparePort()),
      DATABASE_URL: database,
    });
  });

  test('its health check speaks HTTPS when the container serves TLS itself', async (t) => {
    const { certPath, keyPath } = certificate(t);
    const env = { ...stageEnv(runtime), PORT: String(await sparePort()), DATABASE_URL: join(tempDir(t), 'p.db') };
    const tls = { ...env, TLS_CERT: certPath, TLS_KEY: keyPath };
    const { child, exited } = await start(t, execForm(last(runtime, 'CMD')), tls);
    assert.equal(await run(healthcheck, tls), 0, 'over HTTPS');
    assert.notEqual(await run(healthcheck, env), 0, 'plain HTTP to a TLS port fails');
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});

describe('systemd unit (deploy/petstore.service)', () => {
  const exec = (setting('Service.ExecStart') ?? '').split(/\s+/);
  const workingDirectory = setting('Service.WorkingDirectory') as string;

  test("runs the Dockerfile's command as its own user, stops it with SIGTERM past its drain, and confines it", () => {
    assert.equal(setting('Service.Type'), 'simple');
    // The same command as the image's CMD, from the same kind of directory.
    assert.equal(posix.basename(exec[0] as string), 'node');
    assert.deepEqual(
      [posix.relative(workingDirectory, exec[1] as string), ...exec.slice(2)],
      execForm(last(runtime, 'CMD')).slice(1),
    );
    assert.notEqual(setting('Service.User') ?? 'root', 'root');
    assert.equal(setting('Service.KillSignal'), 'SIGTERM');
    assert.equal(setting('Service.KillMode'), 'mixed', 'the primary of --workers N stops its workers itself');
    assert.ok(Number(setting('Service.TimeoutStopSec')) > SHUTDOWN_GRACE_MS / 1000, 'SIGKILL only after the drain');
    assert.equal(setting('Service.Restart'), 'on-failure');
    assert.equal(setting('Service.EnvironmentFile'), '/etc/petstore/petstore.env');
    for (const [key, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['PrivateTmp', 'yes'],
    ]) {
      assert.equal(setting(`Service.${key}`), value, key);
    }
    assert.equal(setting('Service.MemoryDenyWriteExecute'), undefined, 'V8 needs writable code pages');
    // Under ProtectSystem=strict the database directory is writable only as the StateDirectory.
    const example = parseEnvFile(read('deploy/petstore.env'));
    assert.equal(posix.dirname(example.DATABASE_URL as string), `/var/lib/${setting('Service.StateDirectory')}`);
  });

  test('systemd-analyze verify finds nothing to say', async (t) => {
    const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) => existsSync(path));
    if (analyze === undefined) return t.skip('systemd-analyze is not installed here');
    // The unit as shipped, with this machine's node and checkout in place of /usr/bin/node and /opt/petstore.
    const dir = tempDir(t);
    const text = read('deploy/petstore.service')
      .replaceAll(exec[0] as string, process.execPath)
      .replaceAll(workingDirectory, ROOT.replace(/\/$/, ''));
    writeFileSync(join(dir, 'petstore.service'), text);
    const { stdout, stderr } = await promisify(execFile)(analyze, ['verify', join(dir, 'petstore.service')]);
    assert.equal(stdout + stderr, '');
  });

  test('its command with the example EnvironmentFile serves, passes the health check, and drains on SIGTERM', async (t) => {
    const env = parseEnvFile(read('deploy/petstore.env'));
    const database = join(tempDir(t), env.DATABASE_URL as string);
    mkdirSync(dirname(database), { recursive: true });
    await startAndStop(t, ['node', posix.relative(workingDirectory, exec[1] as string), ...exec.slice(2)], {
      ...env,
      PORT: String(await sparePort()),
      DATABASE_URL: database,
    });
  });
});
