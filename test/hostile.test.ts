/**
 * Hostile input, property-based (fast-check), on every store backend.
 *
 * Requests are derived from the service's own OpenAPI document (GET /v1/openapi.json): its operations,
 * path, query and header parameters (Idempotency-Key) and body schemas (NewPet, NewOrder,
 * OrderStatusChange); some are sent twice, as a retrying client would. They are then mutated:
 * wrong types, missing and extra fields, `__proto__`/`constructor`/`prototype` keys, control characters and
 * lone surrogates, int64 edge literals, deep nesting, bodies near and over the 64 KiB limit, odd
 * content types, duplicate and unknown query parameters, odd percent-encodings, malformed cursors and
 * Authorization headers. What fetch will not send (dot segments, bad header bytes, huge headers, unknown
 * methods) goes over a raw HTTP/1.1 socket.
 *
 * For every generated request: never a 5xx; an Error body (exactly code/message/status, status equal to
 * the HTTP status, code from the table, application/json) whenever the status is 400 or more; after every
 * batch the process answers /healthz, and the store equals the store before the batch plus the effect
 * of the batch's successful POST/PATCH requests, replays excepted (so a refused request changed nothing);
 * a request whose answer DESIGN.md fixes whatever else is wrong gets it (401 first, then 403, 415, 413).
 * A request Node's HTTP parser refuses before the app sees it may also be answered by closing the
 * connection, but whatever answer it gets is no 5xx and, when it is an error, the Error body
 * (docs/decisions.md: "malformed HTTP gets a 400 Error body").
 *
 * The tests at the end pin cases found by earlier runs of this suite.
 *
 * The seed is fixed (HOSTILE_SEED overrides it) and printed, so a failure reproduces exactly;
 * HOSTILE_SCALE multiplies the number of runs.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import fc from 'fast-check';
import { ERROR_CODES } from '../src/http/error-codes.js';
import { eachBackend, expectError, type Harness, startHarness } from './helpers/harness.js';
import type { StoreBackend } from './helpers/stores.js';

const SEED = Number(process.env.HOSTILE_SEED ?? 20261121);
const SCALE = Number(process.env.HOSTILE_SCALE ?? 1);
/** DESIGN.md: 64 KiB body limit. */
const BODY_LIMIT = 64 * 1024;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Node's default --max-http-header-size: the request line and headers together. */
const NODE_MAX_HEADER_BYTES = 16 * 1024;
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

// ---------------------------------------------------------------------------------------------------------
// Requests and their transport
// ---------------------------------------------------------------------------------------------------------

interface HostileRequest {
  readonly method: string;
  /** The request-target exactly as it goes on the wire. */
  readonly target: string;
  /** Header lines in order; a name may repeat. Values are latin1 (one char per byte). */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body?: Buffer;
  /** Sent over a raw socket: fetch would refuse or rewrite it. */
  readonly raw: boolean;
  /** False when Node's HTTP parser may refuse it before the app sees it (400/431 or a closed connection). */
  readonly protocolValid: boolean;
  /** The status DESIGN.md promises for it, when the generator knows. */
  readonly expect?: number;
  /** Sent without the Host and Connection headers the raw transport adds otherwise. */
  readonly noHost?: boolean;
  /** A request without Host: the app answers it (see its own test below). */
  readonly nodeAnswers?: boolean;
}

interface HostileResponse {
  /** Undefined: the connection closed without a response. */
  readonly status: number | undefined;
  readonly contentType: string | undefined;
  readonly text: string;
  readonly json: any;
  /** `Idempotent-Replayed: true`: the stored answer to an earlier request, which changes nothing. */
  readonly replayed?: boolean;
  readonly why?: string | undefined;
}

function clip(text: string, max = 160): string {
  const printable = JSON.stringify(text);
  return printable.length <= max ? printable : `${printable.slice(0, max)}…(${text.length} chars)`;
}

function summary(request: HostileRequest): string {
  const headers = request.headers.map(([name, value]) => `${name}: ${clip(value, 90)}`).join(' | ');
  const body =
    request.body === undefined ? '' : ` body(${request.body.length} B)=${clip(request.body.toString('latin1'))}`;
  return `${request.method} ${clip(request.target, 200)} [${headers}]${body}${request.raw ? ' (raw socket)' : ''}`;
}

/** Attaches a short description, so fast-check reports a counterexample without 64 KiB of body. */
function described<T extends HostileRequest>(request: T): T {
  Object.defineProperty(request, fc.toStringMethod, { value: () => summary(request), enumerable: false });
  return request;
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One HTTP/1.1 request on its own connection, written as given; the answer is read until the server closes.
 * A request the parser may still be waiting on (an invalid one) is half-closed after a moment, so the
 * server sees the end of it; a valid one is not (Node aborts a request whose client half-closes).
 */
function rawExchange(
  port: number,
  bytes: Buffer,
  protocolValid: boolean,
  timeoutMs = 10_000,
): Promise<HostileResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, timeoutMs);
    const halfClose = protocolValid ? undefined : setTimeout(() => socket.end(), 300);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      clearTimeout(halfClose);
      const response = parseRawResponse(Buffer.concat(chunks));
      resolve(
        timedOut && response.status === undefined ? { ...response, why: `no answer in ${timeoutMs} ms` } : response,
      );
    });
  });
}

function parseRawResponse(data: Buffer): HostileResponse {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return { status: undefined, contentType: undefined, text: '', json: undefined, why: 'closed' };
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = data.subarray(end + 4);
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (lineEnd < 0 || !(size > 0)) break;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  } else if (headers.has('content-length')) {
    body = body.subarray(0, Number(headers.get('content-length')));
  }
  const text = body.toString('utf8');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  return {
    status: status === undefined ? undefined : Number(status),
    contentType: headers.get('content-type'),
    text,
    json: parseJson(text),
    replayed: headers.get('idempotent-replayed') === 'true',
  };
}

function rawBytes(request: HostileRequest): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`];
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
  if (request.noHost !== true) lines.push('Host: 127.0.0.1');
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (request.body !== undefined && !names.has('content-length') && !names.has('transfer-encoding')) {
    lines.push(`Content-Length: ${request.body.length}`);
  }
  if (request.noHost !== true) lines.push('Connection: close');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return request.body === undefined ? head : Buffer.concat([head, request.body]);
}

class Counter {
  generated = 0;
  total = 0;
  /** How the generated requests were answered: status (or `closed`) → count. */
  readonly outcomes = new Map<string, number>();
  record(response: HostileResponse): void {
    const key = response.status === undefined ? 'closed' : String(response.status);
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
  }
}

async function send(url: string, request: HostileRequest, counter: Counter): Promise<HostileResponse> {
  counter.generated++;
  counter.total++;
  const port = Number(new URL(url).port);
  if (request.raw) return rawExchange(port, rawBytes(request), request.protocolValid);
  const headers = new Headers();
  try {
    for (const [name, value] of request.headers) headers.append(name, value);
  } catch {
    // fetch refuses this header: the raw socket sends it as it is.
    return rawExchange(port, rawBytes(request), request.protocolValid);
  }
  try {
    const response = await fetch(url + request.target, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      text,
      json: parseJson(text),
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    // undici refuses some header values itself (UND_ERR_INVALID_ARG): the raw socket sends them.
    if ((error as Error).message === 'fetch failed' && cause?.code !== 'UND_ERR_INVALID_ARG') {
      return {
        status: undefined,
        contentType: undefined,
        text: '',
        json: undefined,
        why: cause?.code ?? cause?.message,
      };
    }
    return rawExchange(port, rawBytes(request), request.protocolValid);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The invariants
// ---------------------------------------------------------------------------------------------------------

const CODE_STATUS: Record<string, number> = ERROR_CODES;

/**
 * The successes that are not JSON bodies: `/metrics` (Prometheus text) and the `/docs` page with its
 * assets (HTML, scripts, styles). Its copy of the document, `/docs/json`, is JSON like any other.
 */
function isNotJson(target: string): boolean {
  return /^\/metrics(\?|$)/.test(target) || (/^\/docs([/?]|$)/.test(target) && !/^\/docs\/json(\?|$)/.test(target));
}

function problemsWithErrorBody(request: HostileRequest, response: HostileResponse): string[] {
  const status = response.status ?? 0;
  const problems: string[] = [];
  if (!response.contentType?.toLowerCase().startsWith('application/json')) {
    problems.push(`content-type ${response.contentType}`);
  }
  if (request.method === 'HEAD') return problems;
  const body = response.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [...problems, 'body is not an object'];
  if (Object.keys(body).sort().join() !== 'code,message,status')
    problems.push('keys are not exactly code,message,status');
  if (body.status !== status) problems.push(`body.status ${body.status} is not the HTTP status ${status}`);
  if (typeof body.message !== 'string') problems.push('message is not a string');
  if (typeof body.code !== 'string' || CODE_STATUS[body.code] !== status) {
    problems.push(`code ${JSON.stringify(body.code)} is not the table's code for ${status}`);
  }
  return problems;
}

function failure(request: HostileRequest, response: HostileResponse, what: string): string {
  return `${what}\n  request:  ${summary(request)}\n  response: ${response.status ?? `(${response.why ?? 'closed'})`} ${response.contentType ?? ''} ${clip(response.text, 400)}`;
}

/** Every generated request: no 5xx, an Error body on every error, the promised status when there is one. */
function checkResponse(request: HostileRequest, response: HostileResponse): void {
  if (response.status === undefined) {
    assert.ok(!request.protocolValid, failure(request, response, 'the connection closed without an answer'));
    return;
  }
  assert.ok(response.status < 500, failure(request, response, `a ${response.status}`));
  if (request.nodeAnswers === true && response.status === 400) return;
  if (request.expect !== undefined) {
    assert.equal(response.status, request.expect, failure(request, response, `expected ${request.expect}`));
  }
  if (response.status >= 400) {
    const problems = problemsWithErrorBody(request, response);
    assert.deepEqual(problems, [], failure(request, response, `not an Error body: ${problems.join('; ')}`));
  } else if (request.method !== 'HEAD' && response.status !== 204 && !isNotJson(request.target)) {
    assert.ok(response.json !== undefined, failure(request, response, 'a success whose body is not JSON'));
  }
}

// ---------------------------------------------------------------------------------------------------------
// The store, and what a batch may change in it
// ---------------------------------------------------------------------------------------------------------

interface Snapshot {
  readonly pets: readonly any[];
  readonly orders: readonly any[];
}

async function listAll(h: Harness, first: string, counter: Counter): Promise<any[]> {
  const items: any[] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    counter.total++;
    const page = await h.call('GET', path);
    assert.equal(page.status, 200, `${path}: ${page.text}`);
    items.push(...page.json);
    path = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return items;
}

async function snapshot(h: Harness, counter: Counter): Promise<Snapshot> {
  return {
    pets: await listAll(h, '/v1/pets?limit=100', counter),
    orders: await listAll(h, '/v1/store/orders?limit=100', counter),
  };
}

const PET_STATUS_AFTER_ORDER: Record<string, string> = {
  placed: 'pending',
  approved: 'pending',
  delivered: 'sold',
  cancelled: 'available',
};

/** The store after this request, if it is a successful POST or PATCH; unchanged for anything else. */
function applyEffect(before: Snapshot, request: HostileRequest, response: HostileResponse): Snapshot {
  const status = response.status ?? 0;
  if (status < 200 || status >= 300 || (request.method !== 'POST' && request.method !== 'PATCH')) return before;
  if (response.replayed === true) return before;
  const body = response.json;
  const describedResponse = failure(request, response, 'a success the store model does not know');
  assert.ok(typeof body === 'object' && body !== null, describedResponse);
  if (request.method === 'POST' && status === 201 && 'categoryId' in body) {
    return { ...before, pets: [...before.pets, body] };
  }
  const petStatus = PET_STATUS_AFTER_ORDER[body.status];
  assert.ok('petId' in body && petStatus !== undefined, describedResponse);
  const pets = before.pets.map((pet) => (pet.id === body.petId ? { ...pet, status: petStatus } : pet));
  if (request.method === 'POST' && status === 201) return { pets, orders: [...before.orders, body] };
  assert.ok(request.method === 'PATCH' && status === 200, describedResponse);
  return { pets, orders: before.orders.map((order) => (order.id === body.id ? body : order)) };
}

// ---------------------------------------------------------------------------------------------------------
// The world a property runs in: a harness with some pets and orders, the OpenAPI operations, cursors
// ---------------------------------------------------------------------------------------------------------

type Schema = Record<string, any>;

interface Parameter {
  readonly name: string;
  readonly schema: Schema;
}

interface Operation {
  readonly id: string;
  readonly method: string;
  /** `/v1/pets/{petId}` */
  readonly template: string;
  readonly pathParameters: readonly Parameter[];
  readonly queryParameters: readonly Parameter[];
  /** Request headers the document describes (`Idempotency-Key` on the POSTs). */
  readonly headerParameters: readonly Parameter[];
  readonly body?: Schema;
  readonly scopes: 'read' | 'write';
}

interface World {
  readonly h: Harness;
  readonly doc: Schema;
  readonly operations: readonly Operation[];
  /** Cursors the service issued: pets and orders, with and without a status filter. */
  readonly cursors: readonly string[];
  readonly counter: Counter;
  known: Snapshot | undefined;
}

function resolve(doc: Schema, schema: Schema): Schema {
  if (typeof schema.$ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : doc.components?.schemas?.[name];
    assert.ok(target !== undefined, `unresolvable $ref ${schema.$ref}`);
    return resolve(doc, target);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    const { allOf, ...rest } = schema;
    return { ...resolve(doc, allOf[0]), ...rest };
  }
  return schema;
}

/** The operations of the OpenAPI document, with their parameters and body schema resolved. */
function operationsOf(doc: Schema): Operation[] {
  const base = new URL(doc.servers?.[0]?.url ?? '/', 'http://x').pathname.replace(/\/$/, '');
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete']) {
      const operation = item[method];
      if (operation === undefined) continue;
      const parameters: Schema[] = [...(item.parameters ?? []), ...(operation.parameters ?? [])];
      const of = (where: string) =>
        parameters.filter((p) => p.in === where).map((p) => ({ name: p.name, schema: resolve(doc, p.schema ?? {}) }));
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({
        id: operation.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        template: base + path,
        pathParameters: of('path'),
        queryParameters: of('query'),
        headerParameters: of('header'),
        ...(bodySchema === undefined ? {} : { body: resolve(doc, bodySchema) }),
        scopes: method === 'get' ? 'read' : 'write',
      });
    }
  }
  return operations;
}

async function createWorld(t: TestContext, backend: StoreBackend): Promise<World> {
  const h = await startHarness(t, backend);
  const counter = new Counter();
  const openapi = await h.call('GET', '/v1/openapi.json', { key: null });
  assert.equal(openapi.status, 200);
  const doc = openapi.json;
  const operations = operationsOf(doc);
  const ids = operations.map((operation) => operation.id).sort();
  for (const id of ['createPet', 'getPet', 'listPets', 'listOrders', 'placeOrder', 'changeOrderStatus']) {
    assert.ok(ids.includes(id), `the OpenAPI document lacks ${id}: ${ids.join()}`);
  }
  // Some state for the requests to hit: pets in each status, orders in several, pages to have cursors for.
  const pets = await h.createPets(6, (i) => ({
    name: `seed-${i}`,
    categoryId: i + 1,
    status: i === 4 ? 'pending' : i === 5 ? 'sold' : 'available',
  }));
  for (const [index, moves] of [
    [0, []],
    [1, ['approved']],
  ] as const) {
    const order = await h.call('POST', '/v1/store/orders', { body: { petId: pets[index].id } });
    assert.equal(order.status, 201, order.text);
    for (const status of moves) {
      assert.equal((await h.call('PATCH', `/v1/store/orders/${order.json.id}`, { body: { status } })).status, 200);
    }
  }
  const cursors: string[] = [];
  for (const list of ['/v1/pets?limit=1', '/v1/pets?limit=1&status=available', '/v1/store/orders?limit=1']) {
    const link = (await h.call('GET', list)).headers.get('link') ?? '';
    const cursor = /[?&]cursor=([^&>]+)/.exec(link)?.[1];
    assert.ok(cursor !== undefined, `no next link on ${list}: ${link}`);
    cursors.push(decodeURIComponent(cursor));
  }
  return { h, doc, operations, cursors, counter, known: undefined };
}

/** Sends a batch, checks every answer, then that the process is up and the store changed only as the successes say. */
async function runBatch(world: World, batch: readonly HostileRequest[]): Promise<void> {
  const { h, counter } = world;
  const before = world.known ?? (await snapshot(h, counter));
  world.known = undefined;
  let expected = before;
  for (const request of batch) {
    const response = await send(h.url, request, counter);
    counter.record(response);
    checkResponse(request, response);
    expected = applyEffect(expected, request, response);
  }
  counter.total++;
  const health = await h.call('GET', '/healthz', { key: null });
  assert.equal(health.status, 200, `the process stopped answering after: ${batch.map(summary).join('\n')}`);
  const after = await snapshot(h, counter);
  assert.deepEqual(after, expected, `the store changed beyond the successes of:\n${batch.map(summary).join('\n')}`);
  world.known = after;
}

async function property(
  t: TestContext,
  world: World,
  offset: number,
  numRuns: number,
  batch: fc.Arbitrary<HostileRequest[]>,
  options: { endOnFailure?: boolean } = {},
): Promise<void> {
  const seed = SEED + offset;
  const start = { generated: world.counter.generated, total: world.counter.total, at: Date.now() };
  world.counter.outcomes.clear();
  t.diagnostic(`fast-check seed ${seed} (HOSTILE_SEED=${SEED}), ${numRuns} runs`);
  try {
    await fc.assert(
      fc.asyncProperty(batch, (requests) => runBatch(world, requests)),
      { seed, numRuns, includeErrorInReport: true, ...options },
    );
  } finally {
    t.diagnostic(
      `${world.counter.generated - start.generated} generated requests, ` +
        `${world.counter.total - start.total} HTTP requests in all, ${Date.now() - start.at} ms; answers: ` +
        [...world.counter.outcomes]
          .sort()
          .map(([status, n]) => `${status}×${n}`)
          .join(' '),
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Generators: JSON text, values, strings
// ---------------------------------------------------------------------------------------------------------

/** JSON as text parts: raw literals (int64 edges, escapes, deep nesting), duplicate keys, `__proto__` as a key. */
type Json =
  | { readonly kind: 'raw'; readonly text: string }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'array'; readonly items: readonly Json[] }
  | { readonly kind: 'object'; readonly entries: ReadonlyArray<readonly [string, Json]> };

const raw = (text: string): Json => ({ kind: 'raw', text });
const value = (v: unknown): Json => ({ kind: 'value', value: v });

function jsonText(json: Json): string {
  switch (json.kind) {
    case 'raw':
      return json.text;
    case 'value':
      // JSON.stringify escapes lone surrogates and control characters: `"\ud800"`, `"\u0000"`.
      return JSON.stringify(json.value) ?? 'null';
    case 'array':
      return `[${json.items.map(jsonText).join(',')}]`;
    case 'object':
      return `{${json.entries.map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`).join(',')}}`;
  }
}

/** A list of tokens separated by white space. */
function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** int64 and double edge literals, written as the text a client would send. */
const NUMBER_LITERALS = [
  ...words(`
  0 -0 1 -1 1.0 1.5 1e-7 1E2 1e3 100 101 1000 1001 9007199254740991 9007199254740992
  9007199254740993 -9007199254740991 -9007199254740992 9223372036854775807 9223372036854775808
  -9223372036854775808 -9223372036854775809 18446744073709551616 1e308 -1e308 1e309 4.9e-324 10e-1
`),
  `1${'0'.repeat(399)}`,
  '9'.repeat(401),
];

const CONTROL = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code));
const SURROGATE = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const hostileChar = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'Z', '0', ' ', '-', 'é', '名', '🐶', 'ß') },
  { weight: 2, arbitrary: CONTROL },
  { weight: 2, arbitrary: SURROGATE },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '\u007f',
      '\u0085',
      '\u009f',
      '\u00a0',
      '\u200b',
      '\u2028',
      '\u2029',
      '\u202e',
      '\u3000',
      '\ufeff',
      '\ufffe',
      '\uffff',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('"', '\\', '/', "'", '<', '>', '&', '%', '{', '}', '[', ']') },
);

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: hostileChar, maxLength: 24 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '__proto__',
      'constructor',
      'prototype',
      'available',
      'AVAILABLE',
      'available ',
      'placed',
      'delivered',
      'null',
      '1',
      'NaN',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(199, 200, 201, 1000).map((n) => 'x'.repeat(n)) },
  // Near the body limit, or over it.
  { weight: 1, arbitrary: fc.integer({ min: BODY_LIMIT - 64, max: BODY_LIMIT + 64 }).map((n) => 'y'.repeat(n)) },
  // A valid name hidden in white space: 1 character after trimming.
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => `${' '.repeat(n)}x`) },
);

/** String literals only raw JSON text can carry: escaped lone surrogates, NUL, invalid escapes, raw controls. */
const RAW_STRING_LITERALS = [
  '"\\ud800"',
  '"\\uDFFF\\uD800"',
  '"a\\udc00b"',
  '"\\ud83d"',
  '"a\\u0000b"',
  '"\\u001f"',
  '"\\u007f"',
  '"\\/"',
  '"\\x41"',
  '"\\u12"',
  '"\\uZZZZ"',
  '"\t"',
  '"a\nb"',
  '"\u0000"',
  '"\\"',
];

const NEST_KINDS = ['array', 'object', 'mixed'] as const;
function nested(kind: (typeof NEST_KINDS)[number], depth: number): string {
  switch (kind) {
    case 'array':
      return `${'['.repeat(depth)}${']'.repeat(depth)}`;
    case 'object':
      return `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`;
    case 'mixed': {
      const half = Math.ceil(depth / 2);
      return `${'[{"__proto__":'.repeat(half)}1${'}]'.repeat(half)}`;
    }
  }
}
const deepNesting: fc.Arbitrary<Json> = fc
  .tuple(
    fc.constantFrom(...NEST_KINDS),
    fc.oneof(fc.constant(10_000), fc.integer({ min: 100, max: 12_000 }), fc.integer({ min: 20_000, max: 40_000 })),
  )
  .map(([kind, depth]) => raw(nested(kind, depth)));

const hostileKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      '__defineGetter__',
      'valueOf',
      'id',
      '',
      ' name',
      'Name',
      'categoryid',
      'petid',
      'STATUS',
      '\u0000',
      '\ud800',
      'name\u0000',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: hostileChar, maxLength: 8 }) },
);

const hostileScalar: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NUMBER_LITERALS).map(raw) },
  { weight: 1, arbitrary: fc.double().map((d) => (Number.isFinite(d) ? value(d) : raw(String(d)))) },
  { weight: 1, arbitrary: fc.integer().map(value) },
  { weight: 3, arbitrary: hostileString.map(value) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_STRING_LITERALS).map(raw) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false).map(value) },
);

function hostileValueOfDepth(depth: number): fc.Arbitrary<Json> {
  const leaf = fc.oneof({ weight: 12, arbitrary: hostileScalar }, { weight: 1, arbitrary: deepNesting });
  if (depth <= 0) return leaf;
  const inner = hostileValueOfDepth(depth - 1);
  return fc.oneof(
    { weight: 6, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(inner, { maxLength: 3 }).map((items): Json => ({ kind: 'array', items })) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(hostileKey, inner), { maxLength: 3 })
        .map((entries): Json => ({ kind: 'object', entries })),
    },
  );
}
const hostileValue = hostileValueOfDepth(2);

/** Values that satisfy a schema of the document (mostly small ids, so requests reach existing rows). */
function validJson(doc: Schema, schema: Schema): fc.Arbitrary<Json> {
  const s = resolve(doc, schema);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum).map(value);
  switch (s.type) {
    case 'integer': {
      const min: number = s.minimum ?? -MAX_SAFE;
      const max: number = s.maximum ?? MAX_SAFE;
      const clamp = (n: number) => Math.min(max, Math.max(min, n));
      return fc
        .oneof(
          { weight: 6, arbitrary: fc.integer({ min: clamp(1), max: clamp(10) }) },
          { weight: 1, arbitrary: fc.integer({ min, max }) },
          { weight: 1, arbitrary: fc.constantFrom(min, max) },
        )
        .map(value);
    }
    case 'string': {
      const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
      return fc
        .string({ unit: 'grapheme', minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 24, 24) })
        .filter((text) => (pattern?.test(text) ?? true) && text.trim() !== '')
        .map(value);
    }
    case 'boolean':
      return fc.boolean().map(value);
    case 'object': {
      const required = new Set<string>(s.required ?? []);
      const fields = Object.entries<Schema>(s.properties ?? {}).map(([name, property]) =>
        required.has(name)
          ? validJson(doc, property).map((item) => [[name, item] as const])
          : fc.option(
              validJson(doc, property).map((item) => [[name, item] as const]),
              { nil: [] as Array<readonly [string, Json]> },
            ),
      );
      return fc.tuple(...fields).map((parts): Json => ({ kind: 'object', entries: parts.flat() }));
    }
    default:
      return hostileValue;
  }
}

type Mutation =
  | { readonly kind: 'drop'; readonly at: number }
  | {
      readonly kind: 'extra' | 'replace' | 'duplicate';
      readonly at: number;
      readonly key: string;
      readonly value: Json;
    };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constantFrom('extra' as const, 'replace' as const, 'duplicate' as const),
    at: fc.nat(),
    key: hostileKey,
    value: hostileValue,
  }),
);

function mutate(body: Json, mutations: readonly Mutation[]): Json {
  if (body.kind !== 'object') return body;
  let entries = [...body.entries];
  for (const m of mutations) {
    const at = entries.length === 0 ? 0 : m.at % entries.length;
    const existing = entries[at];
    if (m.kind === 'drop') entries = entries.filter((_, i) => i !== at);
    else if (m.kind === 'extra') entries.splice(m.at % (entries.length + 1), 0, [m.key, m.value]);
    else if (existing !== undefined && m.kind === 'replace') entries[at] = [existing[0], m.value];
    else if (existing !== undefined) entries.push([existing[0], m.value]);
  }
  return { kind: 'object', entries };
}

/** Text that is not JSON, made from text that is. */
const malformation = fc.record({
  at: fc.nat(),
  how: fc.constantFrom('truncate', 'insert', 'bom', 'trailing', 'quotes'),
  insert: fc.constantFrom('\u0000', '\u0001', ',', '}', ']', "'", 'NaN', 'Infinity', '/*c*/', '\ud800', '\\', '"'),
});
function malformed(text: string, m: { at: number; how: string; insert: string }): string {
  const at = 1 + (m.at % Math.max(1, text.length - 1));
  switch (m.how) {
    case 'truncate':
      return text.slice(0, at);
    case 'insert':
      return text.slice(0, at) + m.insert + text.slice(at);
    case 'bom':
      return `\ufeff${text}`;
    case 'trailing':
      return `${text}${m.insert}`;
    default:
      return text.replaceAll('"', "'");
  }
}

/** Makes the body exactly `size` bytes: white space after the JSON, or a longer first string field. */
function sized(text: string, size: number, inString: boolean): string {
  const missing = size - Buffer.byteLength(text);
  if (missing <= 0) return text;
  const quote = text.indexOf('":"');
  if (inString && quote >= 0) return `${text.slice(0, quote + 3)}${'z'.repeat(missing)}${text.slice(quote + 3)}`;
  return text + ' '.repeat(missing);
}

const BODY_SIZES = fc.oneof(
  fc.integer({ min: BODY_LIMIT - 8, max: BODY_LIMIT + 8 }),
  fc.constantFrom(BODY_LIMIT - 1, BODY_LIMIT, BODY_LIMIT + 1, 70 * 1024, 100 * 1024),
);

/** A request body for a schema: mostly the schema's own shape, mutated; sometimes something else entirely. */
function bodyText(doc: Schema, schema: Schema): fc.Arbitrary<string> {
  const base = validJson(doc, schema);
  return fc.oneof(
    { weight: 3, arbitrary: base.map(jsonText) },
    {
      weight: 6,
      arbitrary: fc
        .tuple(base, fc.array(mutation, { minLength: 1, maxLength: 3 }))
        .map(([json, mutations]) => jsonText(mutate(json, mutations))),
    },
    { weight: 1, arbitrary: hostileValue.map(jsonText) },
    { weight: 1, arbitrary: deepNesting.map(jsonText) },
    { weight: 1, arbitrary: fc.tuple(base, malformation).map(([json, m]) => malformed(jsonText(json), m)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(base, BODY_SIZES, fc.boolean())
        .map(([json, size, inString]) => sized(jsonText(json), size, inString)),
    },
  );
}

// ---------------------------------------------------------------------------------------------------------
// Generators: paths, queries, headers
// ---------------------------------------------------------------------------------------------------------

/** Encodes every byte of the UTF-8 form that is not unreserved (lone surrogates become EF BF BD). */
function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Path segments as they go on the wire. Invalid UTF-8 escapes and segments over 100 characters have their own tests below. */
const HOSTILE_SEGMENTS = [
  ...words(`
  0 -1 -0 1.0 1e3 1e-7 0x10 +1 %2B1 %201 1%20 01 9007199254740991 9007199254740992
  -9007199254740991 -9007199254740992 9223372036854775807 -9223372036854775808
  18446744073709551616 1e308 NaN Infinity %00 1%00 %01 %7F %2e%2e %2E .. . %2F %252F %25 null true
  __proto__ constructor prototype %E2%80%AE1 %EF%BC%91 %C3%A9 %F0%9F%90%B6 1;2 1,2 1%3B2 %5B%5D
  %7B%7D
`),
  '',
  '1'.repeat(100),
  `-${'9'.repeat(99)}`,
];

function segment(schema: Schema): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: Math.max(1, schema.minimum ?? 1), max: 10 }).map(String) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
    { weight: 1, arbitrary: fc.constantFrom(...NUMBER_LITERALS.filter((n) => n.length <= 100)) },
    { weight: 1, arbitrary: fc.string({ unit: hostileChar, maxLength: 6 }).map(percentEncode) },
  );
}

/** Query values as they go on the wire. */
const ODD_QUERY_VALUES = [
  ...words(`
  %00 a%00b %ff %c0%af %ed%a0%80 %e2%82 %2e%2e .. % %% %zz %u0041 + %20 = == %26 %3D %E2%80%AE
  1%2C2 [] %5B%5D
`),
  '',
];

function queryValue(world: World, parameter: Parameter | undefined): fc.Arbitrary<string> {
  const schema = parameter?.schema ?? {};
  const valid: fc.Arbitrary<string>[] = [];
  if (Array.isArray(schema.enum)) valid.push(fc.constantFrom(...(schema.enum as string[])));
  if (schema.type === 'integer')
    valid.push(fc.integer({ min: schema.minimum ?? 1, max: schema.maximum ?? 100 }).map(String));
  if (parameter?.name === 'cursor') {
    valid.push(fc.constantFrom(...world.cursors).map(encodeURIComponent));
    valid.push(
      fc
        .tuple(fc.constantFrom(...world.cursors), fc.nat(), fc.constantFrom('A', '_', '-', '.', '=', ''))
        .map(([cursor, at, char]) =>
          percentEncode(cursor.slice(0, at % cursor.length) + char + cursor.slice((at % cursor.length) + 1)),
        ),
    );
    valid.push(fc.base64String({ maxLength: 80 }).map((text) => percentEncode(`${text}.${text}`)));
  }
  return fc.oneof(
    ...valid.map((arbitrary) => ({ weight: 4, arbitrary })),
    { weight: 2, arbitrary: fc.constantFrom(...ODD_QUERY_VALUES) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...NUMBER_LITERALS, 'NaN', 'Infinity', ' 1', '1 ', '0x10', 'true').map(percentEncode),
    },
    { weight: 2, arbitrary: hostileString.filter((s) => s.length < 2000).map(percentEncode) },
    // Huge and malformed cursors (and anything else): up to ~12 KB, under Node's 16 KiB header limit.
    { weight: 1, arbitrary: fc.integer({ min: 150, max: 12_000 }).map((n) => 'A'.repeat(n)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((n) => '.'.repeat(n)) },
  );
}

const ODD_QUERY_NAMES = [
  ...words(`
  __proto__ constructor prototype toString hasOwnProperty stauts Limit LIMIT limit[] limit[0] a[b]
  __proto__[admin] %00 %ff limit%00 l%69mit cursor%20 offset page
`),
  '',
];

function query(world: World, operation: Operation): fc.Arbitrary<string> {
  const declared = operation.queryParameters.map((parameter) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant<string[]>([]) },
      { weight: 3, arbitrary: queryValue(world, parameter).map((v) => [`${parameter.name}=${v}`]) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(queryValue(world, parameter), queryValue(world, parameter))
          .map(([a, b]) => [`${parameter.name}=${a}`, `${parameter.name}=${b}`]),
      },
      { weight: 1, arbitrary: fc.constant([parameter.name]) },
    ),
  );
  const extra = fc.oneof(
    { weight: 6, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 1,
      arbitrary: fc.array(
        fc.tuple(fc.constantFrom(...ODD_QUERY_NAMES), queryValue(world, undefined)).map(([n, v]) => `${n}=${v}`),
        { minLength: 1, maxLength: 3 },
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(['&'], ['&&'], ['='], [';'], ['a=1;b=2']) },
  );
  return fc.tuple(fc.tuple(...declared), extra).map(([parts, more]) => {
    const all = [...parts.flat(), ...more];
    return all.length === 0 ? '' : `?${all.join('&')}`;
  });
}

interface AuthChoice {
  readonly header: string | undefined;
  /** What the key can do: undefined when the header is not a valid key at all. */
  readonly scopes: readonly ('read' | 'write')[] | undefined;
}

/** Deterministic junk of a given length from a small alphabet (latin1 characters). */
function junk(seed: number, length: number, alphabet: string): string {
  let state = seed >>> 0 || 1;
  let out = '';
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out += alphabet[state % alphabet.length];
  }
  return out;
}
const VISIBLE_ASCII = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
const OBS_TEXT = Array.from({ length: 128 }, (_, i) => String.fromCharCode(0x80 + i)).join('');

function tamper(key: string, at: number): string {
  const i = 4 + (at % (key.length - 4));
  return key.slice(0, i) + (key[i] === 'A' ? 'B' : 'A') + key.slice(i + 1);
}

function authorization(world: World): fc.Arbitrary<AuthChoice> {
  const { keys } = world.h;
  const both = ['read', 'write'] as const;
  const invalid = (header: string | undefined): AuthChoice => ({ header, scopes: undefined });
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant<AuthChoice>({ header: `Bearer ${keys.all}`, scopes: both }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<AuthChoice>(
        { header: `bearer ${keys.all}`, scopes: both },
        { header: `BEARER   ${keys.all}`, scopes: both },
        { header: `Bearer ${keys.read}`, scopes: ['read'] },
        { header: `Bearer ${keys.write}`, scopes: ['write'] },
      ),
    },
    { weight: 1, arbitrary: fc.constant(invalid(undefined)) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom(
            'Basic dXNlcjpwYXNz',
            'Bearer',
            'Bearer ',
            `Bearer ${keys.all}x`,
            `Bearer ${keys.all.slice(0, -1)}`,
            keys.all,
            `Bearer ${keys.all}, Bearer ${keys.all}`,
            `Bearer ${keys.all} ${keys.all}`,
            `Bearer psk_${'A'.repeat(36)}`,
            `Bearer ${keys.all.toUpperCase()}`,
            `Token ${keys.all}`,
          ),
          fc.nat().map((at) => `Bearer ${tamper(keys.all, at)}`),
          // 8 KiB of junk: a b64token that is no key, visible ASCII, and obs-text bytes.
          fc
            .tuple(fc.nat(), fc.integer({ min: 7_000, max: 9_000 }))
            .map(([seed, n]) => `Bearer ${junk(seed, n, 'abcXYZ019-._~+/')}`),
          fc
            .tuple(fc.nat(), fc.integer({ min: 7_000, max: 9_000 }))
            .map(([seed, n]) => junk(seed, n, VISIBLE_ASCII).trim() || 'x'),
          fc
            .tuple(fc.nat(), fc.integer({ min: 7_000, max: 9_000 }))
            .map(([seed, n]) => `Bearer ${junk(seed, n, OBS_TEXT)}`),
        )
        .map(invalid),
    },
  );
}

interface ContentTypeChoice {
  readonly value: string | undefined;
  /** true: a JSON type the service reads; false: a type it must refuse (415); undefined: either is defensible. */
  readonly json: boolean | undefined;
}
const CONTENT_TYPES: readonly ContentTypeChoice[] = [
  { value: 'application/json', json: true },
  { value: 'application/json; charset=utf-8', json: true },
  { value: 'APPLICATION/JSON', json: undefined },
  { value: 'Application/Json ; Charset="UTF-8"', json: undefined },
  { value: 'application/json;;', json: undefined },
  { value: 'application/json; charset=latin1', json: undefined },
  { value: 'application/json; charset=utf-16', json: undefined },
  { value: 'application/json, text/plain', json: undefined },
  { value: `application/json; x=${'y'.repeat(4000)}`, json: undefined },
  { value: 'application/merge-patch+json', json: undefined },
  { value: 'text/plain', json: false },
  { value: 'text/plain; charset=utf-8', json: false },
  { value: 'application/x-www-form-urlencoded', json: false },
  { value: 'multipart/form-data; boundary=x', json: false },
  { value: 'text/json', json: undefined },
  { value: 'application/jsonx', json: false },
  { value: 'application/problem+json', json: undefined },
  { value: '*/*', json: undefined },
  { value: undefined, json: false },
];
const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant(CONTENT_TYPES[0] as ContentTypeChoice) },
  { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
);

const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Does fetch keep this path as it is? It resolves dot segments (also `%2e`) and rewrites some characters. */
function fetchKeeps(target: string): boolean {
  const path = target.split('?')[0] ?? '';
  return !/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path) && new URL(target, 'http://x').pathname === path;
}

function buildRequest(
  operation: Operation,
  parts: {
    method: string;
    segments: readonly string[];
    query: string;
    body: string | undefined;
    auth: AuthChoice;
    contentType: ContentTypeChoice;
    raw: boolean;
    extraHeaders?: ReadonlyArray<readonly [string, string]>;
  },
): HostileRequest {
  let index = 0;
  const path = operation.template.replace(/\{[^}]+\}/g, () => parts.segments[index++] ?? '1');
  const target = path + parts.query;
  const headers: Array<readonly [string, string]> = [];
  if (parts.auth.header !== undefined) headers.push(['Authorization', parts.auth.header]);
  const body = parts.body === undefined ? undefined : Buffer.from(parts.body, 'utf8');
  if (body !== undefined && parts.contentType.value !== undefined)
    headers.push(['Content-Type', parts.contentType.value]);
  headers.push(...(parts.extraHeaders ?? []));
  const raw =
    parts.raw || !fetchKeeps(target) || (body !== undefined && (parts.method === 'GET' || parts.method === 'HEAD'));
  // What DESIGN.md promises whatever else is wrong: 401 first, then 403, then 415 and 413 for a body.
  const ownMethod = parts.method === operation.method;
  let expect: number | undefined;
  if (parts.auth.scopes === undefined) expect = 401;
  else if (ownMethod && !parts.auth.scopes.includes(operation.scopes)) expect = 403;
  else if (ownMethod && operation.body !== undefined && body !== undefined && body.length > 0) {
    if (parts.contentType.json === false) expect = 415;
    else if (parts.contentType.json === true && body.length > BODY_LIMIT) expect = 413;
  }
  // Past Node's 16 KiB limit on the request line and headers (fetch adds ~300 bytes of its own), or with
  // control characters in a header value, Node's parser refuses the request before the app sees it.
  const headBytes = target.length + headers.reduce((sum, [name, v]) => sum + name.length + v.length + 4, 0) + 512;
  const protocolValid = headBytes < NODE_MAX_HEADER_BYTES && !headers.some(([, v]) => hasControl(v));
  return described({
    method: parts.method,
    target,
    headers,
    ...(body === undefined ? {} : { body }),
    raw,
    protocolValid,
    ...(expect === undefined || !protocolValid ? {} : { expect }),
  });
}

/**
 * Values for a header parameter of the document: a few short tokens (so retries with the same
 * Idempotency-Key and body replay, and with another body are refused), and hostile ones.
 */
function headerValue(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('k1', 'k2', '"k1"', 'retry-1') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        '""',
        '"',
        '"k1',
        'k1"',
        '"k\\"1"',
        'k1, k2',
        'k'.repeat(255),
        'k'.repeat(256),
        '\u00e9t\u00e9',
        'a\tb',
        'a\u0001b',
        'a\u007fb',
        '__proto__',
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.nat(), fc.integer({ min: 300, max: 8_000 }))
        .map(([seed, n]) => junk(seed, n, VISIBLE_ASCII).trim() || 'x'),
    },
  );
}

function headerParameters(operation: Operation): fc.Arbitrary<Array<readonly [string, string]>> {
  return fc
    .tuple(
      ...operation.headerParameters.map((parameter) =>
        fc
          .oneof(
            { weight: 3, arbitrary: fc.constant<string[]>([]) },
            { weight: 3, arbitrary: headerValue().map((v) => [v]) },
            { weight: 1, arbitrary: fc.tuple(headerValue(), headerValue()) },
          )
          .map((values) => values.map((v) => [parameter.name, v] as const)),
      ),
    )
    .map((parts) => parts.flat());
}

function operationRequest(world: World, operation: Operation): fc.Arbitrary<HostileRequest> {
  const body =
    operation.body === undefined
      ? fc.oneof(
          { weight: 8, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.constantFrom('{}', '{"a":', 'x') },
        )
      : fc.oneof(
          { weight: 12, arbitrary: bodyText(world.doc, operation.body) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        );
  return fc
    .record({
      method: fc.oneof(
        { weight: 10, arbitrary: fc.constant(operation.method) },
        { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) },
      ),
      segments: fc.tuple(...operation.pathParameters.map((parameter) => segment(parameter.schema))),
      query: fc.oneof(
        { weight: operation.queryParameters.length > 0 ? 6 : 1, arbitrary: query(world, operation) },
        { weight: operation.queryParameters.length > 0 ? 1 : 6, arbitrary: fc.constant('') },
      ),
      body,
      auth: authorization(world),
      contentType,
      extraHeaders: headerParameters(operation),
      raw: fc.boolean(),
    })
    .map((parts) => buildRequest(operation, parts));
}

// ---------------------------------------------------------------------------------------------------------
// Raw HTTP/1.1: what fetch refuses to send
// ---------------------------------------------------------------------------------------------------------

/** Characters Node's strict parser refuses in a header value (controls other than tab, and DEL). */
function hasControl(text: string): boolean {
  for (const char of text) {
    const code = char.charCodeAt(0);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

const RAW_TARGETS = [
  ...words(`
  /v1/pets /v1/pets/1 /v1/pets/../store/orders /v1/pets/%2e%2e/store/orders /v1/store/orders/..
  /v1/store/orders/. /v1/./pets //v1/pets /v1//pets /v1/pets/ /V1/PETS /v1/pets?limit=1&limit=2
  /v1/pets?limit=1#fragment /v1/pets;limit=1 http://evil.example/v1/pets * /healthz/..
  /v1/openapi.json/.. /v1 /v1/ / /docs /metrics /v2/pets
`),
];

function rawRequest(world: World): fc.Arbitrary<HostileRequest> {
  const { keys } = world.h;
  const goodAuth: [string, string] = ['Authorization', `Bearer ${keys.all}`];
  const json: [string, string] = ['Content-Type', 'application/json'];
  const pet = Buffer.from('{"name":"raw","categoryId":1}');
  const make = (request: Omit<HostileRequest, 'raw'>) => described({ raw: true, ...request });
  return fc.oneof(
    // Authorization of 8 KiB (or more) of any bytes: a 401 while it is a legal field value.
    fc
      .tuple(
        fc.nat(),
        fc.integer({ min: 6_000, max: 9_000 }),
        fc.constantFrom(VISIBLE_ASCII, OBS_TEXT, VISIBLE_ASCII + OBS_TEXT, 'binary'),
      )
      .map(([seed, n, alphabet]) => {
        const text =
          alphabet === 'binary'
            ? junk(seed, n, Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join(''))
            : junk(seed, n, alphabet);
        const value = `Bearer ${text}`.replace(/[\r\n]/g, ' ');
        const legal = !hasControl(value) && value === value.trim();
        return make({
          method: 'GET',
          target: '/v1/pets',
          headers: [['Authorization', value]],
          protocolValid: legal,
          ...(legal ? { expect: 401 } : {}),
        });
      }),
    // Headers past Node's 16 KiB limit: 431 (or 400, or a closed connection).
    fc.integer({ min: 17_000, max: 40_000 }).map((n) =>
      make({
        method: 'GET',
        target: '/v1/pets',
        headers: [goodAuth, ['X-Junk', 'j'.repeat(n)]],
        protocolValid: false,
      }),
    ),
    fc.integer({ min: 60, max: 120 }).map((count) =>
      make({
        method: 'GET',
        target: '/v1/pets?limit=1',
        headers: [
          goodAuth,
          ...Array.from({ length: count }, (_, i) => [`X-H${i}`, 'v'.repeat(100)] as [string, string]),
        ],
        protocolValid: true,
        expect: 200,
      }),
    ),
    // Bad bytes in header names and values, line folding, bare LF, missing colon.
    fc
      .constantFrom<[string, string]>(
        ['Authorization', `Bearer ${keys.all}\u0000`],
        ['Authorization', `Bearer \u0000${keys.all}`],
        ['X-A', 'a\u0000b'],
        ['X-A', 'a\rb'],
        ['X-A', 'a\u007fb'],
        ['X A', 'b'],
        ['X\u0000A', 'b'],
        ['', 'b'],
        ['X-Ä', 'b'],
        ['X-A', 'a\r\n folded'],
        ['X-A:', 'b'],
        ['Content-Type', 'application/json\u0000'],
      )
      .map(([name, value]) =>
        make({
          method: 'POST',
          target: '/v1/pets',
          headers: [goodAuth, json, [name, value]],
          body: pet,
          protocolValid: false,
        }),
      ),
    fc.constantFrom('\n', '\r').map((eol) =>
      make({
        method: 'GET',
        target: `/v1/pets HTTP/1.1${eol}Host: x${eol}Authorization: Bearer ${keys.all}${eol}X-A: b`,
        headers: [],
        protocolValid: false,
      }),
    ),
    // Framing: duplicate or conflicting lengths, bad chunks, no Host.
    fc
      .constantFrom<Array<[string, string]>>(
        [
          ['Content-Length', '29'],
          ['Content-Length', '30'],
        ],
        [
          ['Content-Length', '29'],
          ['Transfer-Encoding', 'chunked'],
        ],
        [['Content-Length', '-1']],
        [['Content-Length', '1e2']],
        [['Content-Length', '+29']],
        [['Transfer-Encoding', 'gzip, chunked, identity']],
        [['Transfer-Encoding', 'chunked\u0000']],
      )
      .map((framing) =>
        make({
          method: 'POST',
          target: '/v1/pets',
          headers: [goodAuth, json, ...framing],
          body: pet,
          protocolValid: false,
        }),
      ),
    fc
      .constantFrom(
        'zz\r\n{}\r\n0\r\n\r\n',
        '-1\r\n',
        'ffffffffffffffffff\r\n{}',
        '2\r\n{}\r\n0\r\nX-Trailer: \u0000\r\n\r\n',
      )
      .map((chunks) =>
        make({
          method: 'POST',
          target: '/v1/pets',
          headers: [goodAuth, json, ['Transfer-Encoding', 'chunked']],
          body: Buffer.from(chunks, 'latin1'),
          protocolValid: false,
        }),
      ),
    // No Host: covered by its own test below, which asks for the Error body.
    fc.constant(
      make({
        method: 'GET',
        target: '/v1/pets',
        headers: [goodAuth, ['Connection', 'close']],
        protocolValid: false,
        noHost: true,
        nodeAnswers: true,
      }),
    ),
    // Content-Type oddities and duplicates, which fetch would merge.
    fc
      .constantFrom<Array<[string, string]>>(
        [['Content-Type', 'application/json; charset=latin1']],
        [['Content-Type', 'APPLICATION/JSON']],
        [['Content-Type', 'application/json;;']],
        [['Content-Type', ' application/json ']],
        [['Content-Type', 'application/json; charset="\u00e9"']],
        [['Content-Type', '\u00ff/\u00ff']],
        [['Content-Type', '']],
        [['Content-Type', ';']],
        [['Content-Type', 'application']],
        [
          ['Content-Type', 'text/plain'],
          ['Content-Type', 'application/json'],
        ],
        [
          ['Content-Type', 'application/json'],
          ['Content-Type', 'text/plain'],
        ],
        [
          ['Authorization', 'Bearer junk'],
          ['Content-Type', 'application/json'],
        ],
        [],
      )
      .map((extra) => {
        const headers = extra.some(([name]) => name === 'Authorization') ? extra : [goodAuth, ...extra];
        return make({ method: 'POST', target: '/v1/pets', headers, body: pet, protocolValid: true });
      }),
    // A body on GET, HEAD and DELETE.
    fc
      .tuple(
        fc.constantFrom('GET', 'HEAD', 'DELETE', 'OPTIONS'),
        fc.constantFrom('{"a":', '{}', 'x'.repeat(BODY_LIMIT + 10)),
      )
      .map(([method, text]) =>
        make({ method, target: '/v1/pets', headers: [goodAuth, json], body: Buffer.from(text), protocolValid: true }),
      ),
    // Odd request targets (dot segments that fetch would resolve) and methods.
    fc
      .tuple(fc.constantFrom(...RAW_TARGETS), fc.boolean())
      .map(([target, authed]) =>
        make({ method: 'GET', target, headers: authed ? [goodAuth] : [], protocolValid: !target.includes('#') }),
      ),
    fc
      .tuple(
        fc.constantFrom('PROPFIND', 'TRACE', 'PURGE', 'SEARCH', 'REPORT', 'MKCOL'),
        fc.constantFrom('/v1/pets', '/v1/pets/1', '/healthz'),
      )
      .map(([method, target]) => make({ method, target, headers: [goodAuth], protocolValid: true })),
    fc
      .tuple(
        fc.constantFrom('FOO', 'get', 'G\u00c9T', 'CONNECT', 'GET\u0000', 'PATCH PATCH'),
        fc.constantFrom('/v1/pets', 'x:1'),
      )
      .map(([method, target]) => make({ method, target, headers: [goodAuth], protocolValid: false })),
    // Raw bytes that are not UTF-8 in the path and query.
    fc
      .constantFrom(
        '/v1/pets/\u00ff',
        '/v1/pets?status=\u00e9',
        '/v1/pets/\u0000',
        '/v1/pets?limit=1\u0000',
        '/v1/pets/ 1',
      )
      .map((target) => make({ method: 'GET', target, headers: [goodAuth], protocolValid: false })),
  );
}

// ---------------------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------------------

/** Invalid UTF-8 or malformed escapes in a path segment: Fastify answers before routing (FST_ERR_BAD_URL). */
const BAD_UTF8_SEGMENTS = [
  '%ff',
  '%c0%af',
  '%80',
  '%ed%a0%80',
  '%e2%82',
  '%C0%80',
  '%fe%ff',
  '1%ff',
  '%',
  '%%',
  '%zz',
  '%u0031',
];

eachBackend((backend) => {
  describe(`hostile input [${backend.name}]`, () => {
    const totals = new Counter();
    const world = async (t: TestContext) => {
      const created = await createWorld(t, backend);
      const counter = created.counter;
      t.after(() => {
        totals.generated += counter.generated;
        totals.total += counter.total;
      });
      return created;
    };

    test('DESIGN.md promises, by hand; a refused request changes nothing', async (t) => {
      const w = await world(t);
      const { h } = w;
      const unchanged = async (what: string, call: () => Promise<void>) => {
        const before = await snapshot(h, w.counter);
        await call();
        assert.deepEqual(await snapshot(h, w.counter), before, `${what} changed the store`);
      };
      await unchanged('an unknown query parameter', async () => {
        for (const list of ['/v1/pets', '/v1/store/orders']) {
          const message = expectError(await h.call('GET', `${list}?stauts=sold`), 400, 'invalid_request');
          assert.match(message, /stauts/);
        }
      });
      await unchanged('a repeated limit', async () => {
        for (const list of ['/v1/pets', '/v1/store/orders']) {
          const message = expectError(await h.call('GET', `${list}?limit=1&limit=2`), 400, 'invalid_request');
          assert.match(message, /limit.*at most once/);
        }
      });
      await unchanged('a __proto__ key', async () => {
        const body = '{"name":"x","categoryId":1,"__proto__":{}}';
        expectError(await h.call('POST', '/v1/pets', { body }), 400, 'invalid_request');
        expectError(
          await h.call('POST', '/v1/store/orders', { body: '{"petId":3,"__proto__":{}}' }),
          400,
          'invalid_request',
        );
      });
      await unchanged('a 70 KiB body', async () => {
        const body = JSON.stringify({ name: 'x'.repeat(70 * 1024), categoryId: 1 });
        expectError(await h.call('POST', '/v1/pets', { body }), 413, 'payload_too_large');
        const padded = `{"petId":3}${' '.repeat(70 * 1024)}`;
        expectError(await h.call('POST', '/v1/store/orders', { body: padded }), 413, 'payload_too_large');
      });
      await unchanged('a text/plain body', async () => {
        const headers = { 'content-type': 'text/plain' };
        const body = '{"name":"x","categoryId":1}';
        expectError(await h.call('POST', '/v1/pets', { body, headers }), 415, 'unsupported_media_type');
        const change = { body: '{"status":"cancelled"}', headers };
        expectError(await h.call('PATCH', '/v1/store/orders/1', change), 415, 'unsupported_media_type');
      });
      // The limit is on bytes: exactly 64 KiB is read (and refused for its content), one byte more is 413.
      const atLimit = sized('{"name":"x","categoryId":1}', BODY_LIMIT, true);
      assert.equal(Buffer.byteLength(atLimit), BODY_LIMIT);
      expectError(await h.call('POST', '/v1/pets', { body: atLimit }), 400, 'invalid_request');
      expectError(await h.call('POST', '/v1/pets', { body: `${atLimit} ` }), 413, 'payload_too_large');
    });

    test('requests derived from the OpenAPI document, mutated', async (t) => {
      const w = await world(t);
      const requests = fc.oneof(...w.operations.map((operation) => operationRequest(w, operation)));
      // Some requests are sent again in the same batch, as a client retrying would (Idempotency-Key replays).
      const batch = fc
        .tuple(fc.array(requests, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 2 }))
        .map(([sent, retries]) => [...sent, ...retries.map((i) => sent[i % sent.length] as HostileRequest)]);
      await property(t, w, 1, runs(1200), batch);
    });

    test('hostile JSON bodies: nesting, size, prototype keys, surrogates, control characters, int64 literals', async (t) => {
      const w = await world(t);
      const withBody = w.operations.filter((operation) => operation.body !== undefined);
      const requests = fc.oneof(
        ...withBody.map((operation) =>
          fc
            .record({
              segments: fc.tuple(...operation.pathParameters.map(() => fc.integer({ min: 1, max: 4 }).map(String))),
              body: fc.oneof(
                bodyText(w.doc, operation.body ?? {}),
                fc
                  .tuple(validJson(w.doc, operation.body ?? {}), fc.array(mutation, { minLength: 1, maxLength: 6 }))
                  .map(([json, m]) => jsonText(mutate(json, m))),
                deepNesting.map(jsonText),
                fc.tuple(hostileValue, BODY_SIZES).map(([json, size]) => sized(jsonText(json), size, false)),
              ),
              contentType: fc.constantFrom(...CONTENT_TYPES.filter((choice) => choice.json === true)),
              raw: fc.boolean(),
            })
            .map((parts) =>
              buildRequest(operation, {
                ...parts,
                method: operation.method,
                query: '',
                auth: { header: `Bearer ${w.h.keys.all}`, scopes: ['read', 'write'] },
              }),
            ),
        ),
      );
      await property(t, w, 2, runs(800), fc.array(requests, { minLength: 1, maxLength: 4 }));
    });

    test('raw HTTP/1.1: malformed and huge headers, framing, odd targets and methods', async (t) => {
      const w = await world(t);
      await property(t, w, 3, runs(700), fc.array(rawRequest(w), { minLength: 1, maxLength: 3 }));
    });

    // A URL that does not decode names no operation: 400 before authentication, like malformed HTTP.
    test('a path segment with invalid UTF-8 or a malformed %-escape gets a 400 Error body', async (t) => {
      const w = await world(t);
      const templates = [...w.operations.filter((o) => o.pathParameters.length > 0), undefined];
      const requests = fc
        .tuple(fc.constantFrom(...templates), fc.constantFrom(...BAD_UTF8_SEGMENTS), fc.boolean())
        .map(([operation, bad, authed]) =>
          described<HostileRequest>({
            method: operation?.method ?? 'GET',
            target: operation === undefined ? `/v1/openapi.json/${bad}` : operation.template.replace(/\{[^}]+\}/, bad),
            headers: authed ? [['Authorization', `Bearer ${w.h.keys.all}`]] : [],
            raw: false,
            protocolValid: true,
            expect: 400,
          }),
        );
      await property(t, w, 4, runs(20), fc.array(requests, { minLength: 1, maxLength: 2 }), { endOnFailure: true });
    });

    test('a path parameter over 100 characters gets the Error body, and 401 without a key', async (t) => {
      const w = await world(t);
      const templates = w.operations.filter((o) => o.pathParameters.length > 0);
      const requests = fc
        .tuple(
          fc.constantFrom(...templates),
          fc.integer({ min: 101, max: 2000 }),
          fc.constantFrom('1', '%31', 'a'),
          fc.boolean(),
        )
        .map(([operation, length, unit, authed]) =>
          described<HostileRequest>({
            method: operation.method,
            target: operation.template.replace(/\{[^}]+\}/, unit.repeat(Math.ceil(length / unit.length))),
            headers: authed ? [['Authorization', `Bearer ${w.h.keys.all}`]] : [],
            ...(operation.method === 'PATCH' ? { body: Buffer.from('{"status":"approved"}') } : {}),
            raw: false,
            protocolValid: true,
            ...(authed ? {} : { expect: 401 }),
          }),
        );
      await property(t, w, 5, runs(20), fc.array(requests, { minLength: 1, maxLength: 2 }), { endOnFailure: true });
    });

    test('a request without Host gets the Error body too', async (t) => {
      const w = await world(t);
      const request = described<HostileRequest>({
        method: 'GET',
        target: '/v1/pets',
        headers: [
          ['Authorization', `Bearer ${w.h.keys.all}`],
          ['Connection', 'close'],
        ],
        raw: true,
        protocolValid: false,
        noHost: true,
      });
      await property(t, w, 6, 1, fc.constant([request]), { endOnFailure: true });
    });

    // A declared charset other than UTF-8 is an unsupported media type (415); undecodable UTF-8 is 400.
    test('a body that is not UTF-8 is refused, not stored with U+FFFD', async (t) => {
      const w = await world(t);
      const badBytes = fc.constantFrom(
        [0xe9],
        [0xff, 0xfe],
        [0xc0, 0xaf],
        [0xed, 0xa0, 0x80],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
        [0x80],
      );
      const requests = fc
        .tuple(badBytes, fc.constantFrom('application/json', 'application/json; charset=latin1'))
        .map(([bytes, type]) =>
          described<HostileRequest>({
            method: 'POST',
            target: '/v1/pets',
            headers: [
              ['Authorization', `Bearer ${w.h.keys.all}`],
              ['Content-Type', type],
            ],
            body: Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from(bytes), Buffer.from('","categoryId":1}')]),
            raw: false,
            protocolValid: true,
            expect: type.includes('latin1') ? 415 : 400,
          }),
        );
      await property(t, w, 7, runs(10), fc.array(requests, { minLength: 1, maxLength: 1 }), { endOnFailure: true });
    });

    test('requests per run', (t) => {
      t.diagnostic(
        `${backend.name}: ${totals.generated} generated requests in this run (${totals.total} HTTP requests with the checks), seed ${SEED}`,
      );
    });
  });
});
