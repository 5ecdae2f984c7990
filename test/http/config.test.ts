import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { startHarness } from '../helpers/harness.js';
import { BACKENDS } from '../helpers/stores.js';

test('DATABASE_URL: SQLite paths in every form, PostgreSQL URLs with the user libpq would pick', () => {
  assert.deepEqual(loadConfig({}).database, { kind: 'sqlite', path: resolve('data/petstore.db') });
  assert.deepEqual(loadConfig({ DATABASE_URL: 'x/p.db' }).database, { kind: 'sqlite', path: resolve('x/p.db') });
  assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:x/p.db' }).database, { kind: 'sqlite', path: resolve('x/p.db') });
  assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:///tmp/p.db' }).database, { kind: 'sqlite', path: '/tmp/p.db' });
  assert.throws(() => loadConfig({ DATABASE_URL: 'sqlite://host/p.db' }), ConfigError);
  assert.throws(
    () => loadConfig({ DATABASE_URL: 'mysql://u:secret@h/db' }),
    (error: Error) => !error.message.includes('secret'),
  );
  // A PostgreSQL URL with one character wrong must stop the process, not become a new SQLite file.
  for (const typo of [
    'postgres//u:secret@h:5432/db',
    'postgresql//u:secret@h/db',
    'postgres:/u:secret@h/db',
    'postgres:u:secret@h/db',
    'POSTGRES//u:secret@h/db',
    'sqlite//p.db',
  ]) {
    assert.throws(
      () => loadConfig({ DATABASE_URL: typo }),
      (error: Error) =>
        error instanceof ConfigError &&
        /^DATABASE_URL looks like a URL/.test(error.message) &&
        !error.message.includes('secret'),
      typo,
    );
  }
  // A file path stays a path, a directory called postgres included; ./ makes a name with a colon a path.
  assert.deepEqual(loadConfig({ DATABASE_URL: 'postgres/p.db' }).database, {
    kind: 'sqlite',
    path: resolve('postgres/p.db'),
  });
  assert.deepEqual(loadConfig({ DATABASE_URL: './a:b.db' }).database, { kind: 'sqlite', path: resolve('a:b.db') });

  const pg = (env: Record<string, string>) => {
    const { database } = loadConfig(env);
    assert.equal(database.kind, 'postgres');
    return database;
  };
  const plain = pg({ DATABASE_URL: 'postgres://127.0.0.1:5432/test' });
  assert.equal(new URL(plain.url).username, userInfo().username);
  assert.equal(new URL(pg({ DATABASE_URL: 'postgresql://127.0.0.1/test', PGUSER: 'app' }).url).username, 'app');
  assert.equal(new URL(pg({ DATABASE_URL: 'postgres://me@127.0.0.1/test', PGUSER: 'app' }).url).username, 'me');
  assert.deepEqual(
    { ...plain, url: '' },
    { kind: 'postgres', url: '', poolSize: 10, connectTimeoutMs: 3000, queryTimeoutMs: 5000 },
  );
  assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://x', DATABASE_POOL_SIZE: '0' }), ConfigError);
});

test('the rest of the environment: defaults, and one clear error per bad value', () => {
  const config = loadConfig({});
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.port, 8080);
  assert.equal(config.publicUrl, undefined);
  assert.equal(config.logLevel, 'info');
  assert.equal(config.tls, undefined);
  assert.equal(loadConfig({ PUBLIC_URL: 'https://pets.example.com/' }).publicUrl, 'https://pets.example.com');
  for (const env of [
    { PORT: '70000' },
    { PORT: 'http' },
    { PUBLIC_URL: 'ftp://x' },
    { PUBLIC_URL: 'https://x/?q=1' },
    { LOG_LEVEL: 'loud' },
    { TLS_CERT: 'cert.pem' },
  ]) {
    assert.throws(() => loadConfig(env), ConfigError, JSON.stringify(env));
  }
  // Like every other setting's, the message shows what it got.
  assert.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /^ConfigError: LOG_LEVEL must be one of .*, got "loud"$/);
});

test('MAX_CONNECTIONS_PER_ADDRESS: 1000 by default, 1 to the process maximum of 10 000', () => {
  assert.equal(loadConfig({}).maxConnectionsPerAddress, 1000);
  assert.equal(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '10000' }).maxConnectionsPerAddress, 10_000);
  assert.equal(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '1' }).maxConnectionsPerAddress, 1);
  for (const bad of ['0', '10001', 'many', '-1', '1.5']) {
    assert.throws(
      () => loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: bad }),
      /^ConfigError: MAX_CONNECTIONS_PER_ADDRESS must be an integer from 1 to 10000/,
      bad,
    );
  }
});

test('EVENT_STREAMS_PER_OWNER, EVENT_STREAMS, EVENT_STREAM_BUFFER_BYTES: defaults, and errors naming each', () => {
  assert.deepEqual(loadConfig({}).eventStreams, { perOwner: 20, perProcess: 500, bufferBytes: 65_536 });
  assert.deepEqual(
    loadConfig({ EVENT_STREAMS_PER_KEY: '1', EVENT_STREAMS: '10000', EVENT_STREAM_BUFFER_BYTES: '1024' }).eventStreams,
    { perOwner: 1, perProcess: 10_000, bufferBytes: 1024 },
  );
  // The older name is read when the new one is not set; the new one wins when both are.
  assert.equal(loadConfig({ EVENT_STREAMS_PER_OWNER: '3', EVENT_STREAMS_PER_KEY: '1' }).eventStreams.perOwner, 3);
  assert.equal(loadConfig({ EVENT_STREAMS_PER_OWNER: '3' }).eventStreams.perOwner, 3);
  for (const [name, bad, range] of [
    ['EVENT_STREAMS_PER_KEY', '0', '1 to 10000'],
    ['EVENT_STREAMS_PER_OWNER', '0', '1 to 10000'],
    ['EVENT_STREAMS', '10001', '1 to 10000'],
    ['EVENT_STREAM_BUFFER_BYTES', '1023', '1024 to 67108864'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: bad }),
      new RegExp(`^ConfigError: ${name} must be an integer from ${range}, got "${bad}"`),
      name,
    );
  }
});

test('TRUST_PROXY: proxy addresses and CIDRs (or none); anything else stops the start naming it', () => {
  assert.deepEqual(loadConfig({}).trustProxy, []);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,::1,fd00::/8,loopback' }).trustProxy, [
    '10.0.0.5',
    '10.1.0.0/16',
    '::1',
    'fd00::/8',
    'loopback',
  ]);
  // `true` and hop counts are refused: trusting any sender lets every client choose its own address.
  for (const bad of ['true', '1', '10.0.0.300', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.1,', 'proxy.lan']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: bad }),
      (error: Error) => error instanceof ConfigError && error.message.startsWith('TRUST_PROXY must'),
      bad,
    );
  }
});

test('EVENT_RETENTION_DAYS: 30 by default, 1 to 3650 days', () => {
  assert.equal(loadConfig({}).eventRetentionDays, 30);
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '1', WEBHOOK_RETRY_SCHEDULE: '1h' }).eventRetentionDays, 1);
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '3650' }).eventRetentionDays, 3650);
  for (const bad of ['0', '3651', '7d', '-1', '1.5']) {
    assert.throws(
      () => loadConfig({ EVENT_RETENTION_DAYS: bad }),
      /^ConfigError: EVENT_RETENTION_DAYS must be an integer from 1 to 3650/,
    );
  }
});

test('EVENT_RETENTION_DAYS must outlast WEBHOOK_RETRY_SCHEDULE with every attempt at its time-out', () => {
  // The default schedule waits 27.6 h: one day of retention would remove events still being retried.
  assert.throws(
    () => loadConfig({ EVENT_RETENTION_DAYS: '1' }),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message ===
        'EVENT_RETENTION_DAYS must be at least 2 to outlast WEBHOOK_RETRY_SCHEDULE=5s,5m,30m,2h,5h,10h,10h ' +
          '(27.6 h of delays) and its 8 attempts of up to WEBHOOK_TIMEOUT_MS=10000, got "1"',
  );
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '2' }).eventRetentionDays, 2);
  // Exactly a day of delays leaves no room for the attempts themselves (two of up to 100 ms).
  assert.throws(
    () => loadConfig({ EVENT_RETENTION_DAYS: '1', WEBHOOK_RETRY_SCHEDULE: '1d', WEBHOOK_TIMEOUT_MS: '100' }),
    /^ConfigError: EVENT_RETENTION_DAYS must be at least 2 to outlast WEBHOOK_RETRY_SCHEDULE=1d /,
  );
  const fits = { EVENT_RETENTION_DAYS: '1', WEBHOOK_RETRY_SCHEDULE: '86399800ms', WEBHOOK_TIMEOUT_MS: '100' };
  assert.equal(loadConfig(fits).eventRetentionDays, 1);
  // A delay of 30 days (the most one may be) needs more than the default 30 days of retention.
  assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '30d' }), /EVENT_RETENTION_DAYS must be at least 31 /);
  assert.equal(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '30d', EVENT_RETENTION_DAYS: '31' }).eventRetentionDays, 31);
});

test('WEBHOOK_TIMEOUT_MS and WEBHOOK_RETRY_SCHEDULE: defaults, units, and errors naming the variable', () => {
  const config = loadConfig({});
  assert.equal(config.webhookTimeoutMs, 10_000);
  const [s, m, h] = [1000, 60_000, 3_600_000];
  assert.deepEqual(config.webhookRetrySchedule, [5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 10 * h]);
  assert.equal(loadConfig({ WEBHOOK_TIMEOUT_MS: '250' }).webhookTimeoutMs, 250);
  assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '100ms, 2s,1m,1h,1d' }).webhookRetrySchedule, [
    100,
    2 * s,
    m,
    h,
    24 * h,
  ]);
  for (const [name, value] of [
    ['WEBHOOK_TIMEOUT_MS', '99'],
    ['WEBHOOK_TIMEOUT_MS', '10s'],
    ['WEBHOOK_RETRY_SCHEDULE', '5'],
    ['WEBHOOK_RETRY_SCHEDULE', '5s,,5m'],
    ['WEBHOOK_RETRY_SCHEDULE', '0s'],
    ['WEBHOOK_RETRY_SCHEDULE', '31d'],
    ['WEBHOOK_RETRY_SCHEDULE', '1.5s'],
    ['WEBHOOK_RETRY_SCHEDULE', '5w'],
    ['WEBHOOK_RETRY_SCHEDULE', Array(51).fill('1s').join(',')],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (error: Error) => error instanceof ConfigError && error.message.startsWith(name),
      `${name}=${value}`,
    );
  }
});

test('WEBHOOK_DISABLE_AFTER: 5 days by default, a duration, or 0 for never', () => {
  assert.equal(loadConfig({}).webhookDisableAfterMs, 5 * 86_400_000);
  assert.equal(loadConfig({ WEBHOOK_DISABLE_AFTER: '12h' }).webhookDisableAfterMs, 12 * 3_600_000);
  assert.equal(loadConfig({ WEBHOOK_DISABLE_AFTER: '0' }).webhookDisableAfterMs, undefined);
  for (const bad of ['5', '0d', '1.5d', '366d', 'never', '5d,1h']) {
    assert.throws(
      () => loadConfig({ WEBHOOK_DISABLE_AFTER: bad }),
      (error: Error) =>
        error instanceof ConfigError &&
        error.message ===
          'WEBHOOK_DISABLE_AFTER must be a duration from 1ms to 365d, a number and a unit (ms, s, m, h, d), ' +
            `e.g. 5d, or 0 for never; got "${bad}"`,
      bad,
    );
  }
});

test('BACKUP_DIR, BACKUP_INTERVAL, BACKUP_KEEP: none by default; 6h and 7; SQLite only; errors naming each', () => {
  assert.equal(loadConfig({}).backups, undefined);
  assert.deepEqual(loadConfig({ BACKUP_DIR: 'backups' }).backups, {
    dir: resolve('backups'),
    intervalMs: 6 * 3_600_000,
    keep: 7,
  });
  assert.deepEqual(loadConfig({ BACKUP_DIR: '/b', BACKUP_INTERVAL: '30m', BACKUP_KEEP: '2' }).backups, {
    dir: '/b',
    intervalMs: 1_800_000,
    keep: 2,
  });
  const refusals: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ BACKUP_KEEP: '3' }, /^BACKUP_KEEP is set but BACKUP_DIR is not: set where backups go$/],
    [{ BACKUP_INTERVAL: '1h' }, /^BACKUP_INTERVAL is set but BACKUP_DIR is not/],
    [
      { BACKUP_DIR: '/b', BACKUP_INTERVAL: '500ms' },
      /^BACKUP_INTERVAL must be a duration from 1s to 30d.*got "500ms"$/,
    ],
    [{ BACKUP_DIR: '/b', BACKUP_INTERVAL: '31d' }, /^BACKUP_INTERVAL must be a duration/],
    [{ BACKUP_DIR: '/b', BACKUP_KEEP: '0' }, /^BACKUP_KEEP/],
    [
      { BACKUP_DIR: '/b', DATABASE_URL: 'postgres://db.example.com/petstore' },
      /^BACKUP_DIR backs up a SQLite database; on PostgreSQL use pg_dump/,
    ],
  ];
  for (const [env, message] of refusals) {
    assert.throws(
      () => loadConfig(env),
      (error: Error) => error instanceof ConfigError && message.test(error.message),
    );
  }
});

test('OTEL_*: traces off unless an OTLP endpoint is set; the SDK switches and OTLP/HTTP only', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
  assert.equal(loadConfig({}).tracing, undefined);
  assert.deepEqual(loadConfig(endpoint).tracing, { serviceName: 'petstore', protocol: 'http/protobuf' });
  assert.deepEqual(
    loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_SERVICE_NAME: 'shop' })
      .tracing,
    { serviceName: 'shop', protocol: 'http/protobuf' },
  );
  assert.equal(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).tracing, undefined);
  assert.equal(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing, undefined);
  assert.deepEqual(loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing, {
    serviceName: 'petstore',
    protocol: 'http/json',
  });
  const both = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' };
  assert.equal(loadConfig({ ...endpoint, ...both }).tracing?.protocol, 'http/protobuf', 'the traces one first');
  const refusals: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }, /^OTEL_TRACES_EXPORTER must be otlp or none, got "zipkin"$/],
    [{ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /must be http\/protobuf or http\/json.*got "grpc"$/],
    [
      { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml' },
      /must be http\/protobuf or http\/json.*got "http\/xml"$/,
    ],
  ];
  for (const [env, message] of refusals) {
    assert.throws(
      () => loadConfig(env),
      (error: Error) => error instanceof ConfigError && message.test(error.message),
    );
  }
});

test('WEBHOOK_ALLOW_PRIVATE_URLS: false by default, exactly true or false', () => {
  assert.equal(loadConfig({}).webhookAllowPrivateUrls, false);
  assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhookAllowPrivateUrls, true);
  assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' }).webhookAllowPrivateUrls, false);
  for (const bad of ['yes', '1', 'TRUE', 'on']) {
    assert.throws(
      () => loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: bad }),
      (error: Error) => error instanceof ConfigError && error.message.includes('WEBHOOK_ALLOW_PRIVATE_URLS'),
      bad,
    );
  }
});

test('PUBLIC_URL ending in /v1 (the OpenAPI servers URL) is the same origin: links never say /v1/v1', async (t) => {
  for (const text of ['https://pets.example.com/v1', 'https://pets.example.com/v1/', 'https://pets.example.com']) {
    assert.equal(loadConfig({ PUBLIC_URL: text }).publicUrl, 'https://pets.example.com', text);
  }
  assert.equal(loadConfig({ PUBLIC_URL: 'https://example.com/pets/v1' }).publicUrl, 'https://example.com/pets');
  assert.equal(loadConfig({ PUBLIC_URL: 'https://example.com/v10' }).publicUrl, 'https://example.com/v10');

  const publicUrl = loadConfig({ PUBLIC_URL: 'https://pets.example.com/v1/' }).publicUrl as string;
  const h = await startHarness(t, BACKENDS[0] as (typeof BACKENDS)[number], { publicUrl });
  const created = await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 } });
  assert.equal(created.status, 201);
  assert.equal(created.headers.get('location'), `https://pets.example.com/v1/pets/${created.json.id}`);
  const document = await h.call('GET', '/v1/openapi.json', { key: null });
  assert.deepEqual(document.json.servers, [{ url: 'https://pets.example.com/v1' }]);
});
