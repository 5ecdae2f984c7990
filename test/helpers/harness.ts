import { after } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type AppOptions, buildApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import type { Scope } from '../../src/domain/api-key.js';
import type { RateLimitOptions } from '../../src/rate-limit/rate-limit-plugins.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import type { Store } from '../../src/store/store.js';
import { type CallOptions, type CallResult, request } from './calls.js';
import type { StoreBackend, StoreFixture } from './stores.js';

export interface Harness {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly store: Store;
  /**
   * Keys of the owner `default`: `all` (read, write, webhooks: the default of every call), and one for
   * each of read and write alone.
   */
  readonly keys: { readonly all: string; readonly read: string; readonly write: string };
  /** Issues another key on the same database (its owner defaults to its name). */
  issueKey(name: string, scopes: readonly Scope[], owner?: string): Promise<string>;
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /**
   * Starts another instance of the service on its own connection to the same database, with the same keys
   * and options (those given replace theirs).
   */
  startInstance(options?: HarnessOptions): Promise<Harness>;
  /** Runs one SQL statement on the database, on a connection of its own (see StoreFixture.sql). */
  sql(text: string): Promise<Record<string, unknown>[]>;
  /** Creates pets over HTTP and returns them in creation order. */
  createPets(count: number, make?: (i: number) => Record<string, unknown>): Promise<any[]>;
}

/** Where a harness registers what stops it: a test's context, or a block's (sharedHarness). */
interface CleanUp {
  after(fn: () => unknown): void;
}

export interface HarnessOptions {
  readonly clock?: Clock;
  readonly publicUrl?: string;
  /** Rate limiting, made anew for each instance (each gets its own limiter, as separate processes would). */
  readonly rateLimit?: () => RateLimitOptions;
  /** Where webhooks may point, and the resolver their host names are checked with. */
  readonly webhooks?: AppOptions['webhooks'];
  /** Runs the webhook dispatcher in each instance, with these settings. */
  readonly webhookDelivery?: AppOptions['webhookDelivery'];
  /** The live event stream's keep-alive interval (15 s when absent). */
  readonly eventStreamKeepAliveMs?: number;
  /** Bounds on live event streams (the defaults when absent). */
  readonly eventStreams?: AppOptions['eventStreams'];
  /** WEBHOOK_ENDPOINTS_PER_OWNER (the default when absent). */
  readonly webhookEndpointsPerOwner?: number;
  /** TRUST_PROXY (none when absent). */
  readonly trustProxy?: readonly string[];
  /** Where the service's log lines go (none when absent). */
  readonly logger?: AppOptions['logger'];
}

async function listen(t: CleanUp, store: Store, options: HarnessOptions) {
  const app = await buildApp({
    store,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    rateLimit: options.rateLimit?.(),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
    webhookDelivery: options.webhookDelivery,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    eventStreams: options.eventStreams,
    ...(options.webhookEndpointsPerOwner === undefined
      ? {}
      : { webhookEndpointsPerOwner: options.webhookEndpointsPerOwner }),
    ...(options.eventStreamKeepAliveMs === undefined ? {} : { eventStreamKeepAliveMs: options.eventStreamKeepAliveMs }),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { app, url };
}

function harness(
  app: FastifyInstance,
  url: string,
  store: Store,
  fixture: StoreFixture,
  keys: Harness['keys'],
  startInstance: Harness['startInstance'],
  issueKey: Harness['issueKey'],
): Harness {
  const call = (method: string, path: string, callOptions: CallOptions = {}) =>
    request(url, method, path, callOptions, keys.all);
  return {
    url,
    app,
    store,
    keys,
    issueKey,
    call,
    startInstance,
    sql: (text) => fixture.sql(text),
    async createPets(count, make = (i) => ({ name: `pet-${i}`, categoryId: 1 })) {
      const pets = [];
      for (let i = 0; i < count; i++) {
        const result = await call('POST', '/v1/pets', { body: make(i) });
        if (result.status !== 201) throw new Error(`create failed: ${result.status} ${result.text}`);
        pets.push(result.json);
      }
      return pets;
    },
  };
}

/** Starts the service on a real port over a fresh store of the given backend, with keys of each scope. */
export async function startHarness(t: CleanUp, backend: StoreBackend, options: HarnessOptions = {}): Promise<Harness> {
  const fixture = await backend.create();
  t.after(() => fixture.dispose());
  const { store } = fixture;
  const clock = options.clock ?? (() => new Date());
  const issueKey = async (name: string, scopes: readonly Scope[], owner?: string) =>
    (await issueApiKey(store, clock, { name, scopes, owner })).key;
  const keys = {
    all: await issueKey('all', ['read', 'write', 'webhooks'], 'default'),
    read: await issueKey('reader', ['read'], 'default'),
    write: await issueKey('writer', ['write'], 'default'),
  };
  const startInstance = async (overrides: HarnessOptions = {}) => {
    const other = await fixture.reopen();
    const { app, url } = await listen(t, other, { ...options, ...overrides });
    return harness(app, url, other, fixture, keys, startInstance, issueKey);
  };
  const { app, url } = await listen(t, store, options);
  return harness(app, url, store, fixture, keys, startInstance, issueKey);
}

/**
 * One harness for the tests of a `describe` block that only read what a fresh service serves (the OpenAPI
 * document): the first test to call the result starts it, and it stops after the block. Building the app
 * is most of a test's CPU where the test itself only reads; a test that changes anything starts its own.
 */
export function sharedHarness(backend: StoreBackend, options: HarnessOptions = {}): () => Promise<Harness> {
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    // In the order they were added, as a test's own after hooks run.
    for (const cleanup of cleanups) await cleanup();
  });
  let started: Promise<Harness> | undefined;
  return () => {
    started ??= startHarness({ after: (fn) => void cleanups.push(fn) }, backend, options);
    return started;
  };
}
