import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { eventually } from '../../dev/eventually.js';
import { createKey } from '../../dev/petstore-cli.js';
import type { Receiver } from '../../dev/webhook-receiver.js';
import { request } from '../helpers/calls.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { cliEnv, freshDatabaseUrl, startServe } from '../helpers/process.js';
import { BACKENDS, eachBackend, type StoreBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/** W3C Trace Context: version, trace id, parent (span) id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/** The stub collector reads spans as JSON; the service's default is protobuf (its own test below). */
const AS_JSON = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };

/**
 * `petstore serve` exporting its spans to a stub collector every 100 ms (rather than every 5 s), with a
 * webhook endpoint at `receiver` for pet.created; `call` makes a request with the key.
 */
async function tracedWithEndpoint(t: TestContext, backend: StoreBackend, receiver: Receiver) {
  const collector = await startOtlpReceiver(t);
  const env = cliEnv(await freshDatabaseUrl(t, backend), {
    ...AS_JSON,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_SERVICE_NAME: 'petstore-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '200ms',
  });
  const key = await createKey(env, 'traced');
  const serve = await startServe(t, env);
  const call = (method: string, path: string, body?: unknown) => request(serve.url, method, path, { body }, key);
  const endpoint = await call('POST', '/v1/webhooks', { url: receiver.url, events: ['pet.created'] });
  assert.equal(endpoint.status, 201, endpoint.text);
  return { collector, call };
}

eachBackend((backend) => {
  describe(`traces [${backend.name}]`, () => {
    test('one trace from POST /v1/pets through each webhook attempt, and the receiver gets it', async (t) => {
      // The first attempt fails, the retry is delivered.
      const receiver = await startReceiver(t, (n) => ({ status: n === 0 ? 500 : 204 }));
      const { collector, call } = await tracedWithEndpoint(t, backend, receiver);

      const created = await call('POST', '/v1/pets', { name: 'Traced', categoryId: 1 });
      assert.equal(created.status, 201, created.text);
      await receiver.until((received) => received.length >= 2, 10_000);

      const requestSpan = await eventually('the span of POST /v1/pets', () =>
        collector.spans.find((span) => span.name === 'POST /v1/pets'),
      );
      assert.equal(requestSpan.kind, 2, 'a server span');
      assert.equal(requestSpan.service, 'petstore-under-test');
      const inTrace = (name: string) =>
        collector.spans.filter((span) => span.traceId === requestSpan.traceId && span.name === name);
      const attempts = await eventually('both attempt spans', () => {
        const found = inTrace('webhook pet.created');
        return found.length === 2 ? found : undefined;
      });
      const [failed, delivered] = [...attempts].sort(
        (a, b) => Number(a.attributes['petstore.webhook.attempt']) - Number(b.attributes['petstore.webhook.attempt']),
      );
      assert.equal(failed?.status, 2, 'the failed attempt is an error span');
      assert.equal(failed?.attributes['http.response.status_code'], 500);
      assert.notEqual(delivered?.status, 2);
      assert.equal(delivered?.attributes['http.response.status_code'], 204);
      assert.equal(failed?.kind, 3, 'a client span');

      // The store call that made the change is in the trace, and the attempts descend from it.
      const [storeSpan] = inTrace('pets.create');
      assert.ok(storeSpan, 'a span for the store call');
      assert.equal(storeSpan.attributes['db.system.name'], backend.name === 'postgres' ? 'postgresql' : 'sqlite');
      assert.equal(failed?.parentSpanId, storeSpan.spanId);
      assert.equal(delivered?.parentSpanId, storeSpan.spanId);

      // Each request the receiver got names its own attempt, in the request's trace.
      const sent = receiver.received.map(({ headers }) => TRACEPARENT.exec(headers.traceparent ?? ''));
      assert.deepEqual(
        sent.map((match) => match?.[1]),
        [requestSpan.traceId, requestSpan.traceId],
      );
      assert.deepEqual(
        sent.map((match) => match?.[2]),
        [failed?.spanId, delivered?.spanId],
      );
      assert.deepEqual(collector.refused, []);
    });

    test('background work stays out of the traces of the requests and attempts that woke it', async (t) => {
      const receiver = await startReceiver(t, () => ({ status: 204 }));
      const { collector, call } = await tracedWithEndpoint(t, backend, receiver);
      // The commit wakes the dispatcher from the request, the attempt's end wakes it again from the attempt.
      const created = await call('POST', '/v1/pets', { name: 'Traced', categoryId: 1 });
      assert.equal(created.status, 201, created.text);
      await receiver.until((received) => received.length >= 1, 10_000);
      const attempt = await eventually('the attempt span', () =>
        collector.spans.find((span) => span.name === 'webhook pet.created'),
      );
      // Spans are exported as they end: once a later request's span is in, so are those of the claims
      // made meanwhile, if they were traced.
      assert.equal((await call('GET', '/v1/pets')).status, 200);
      await eventually('the span of the later GET /v1/pets', () =>
        collector.spans.find((span) => span.name === 'GET /v1/pets'),
      );

      const requestSpan = collector.spans.find((span) => span.name === 'POST /v1/pets');
      assert.ok(requestSpan, 'the span of POST /v1/pets');
      assert.equal(attempt.traceId, requestSpan.traceId, "the attempt stays in its change's trace");
      const inChange = collector.spans.filter((span) => span.traceId === requestSpan.traceId);
      const attemptSpans = new Set(inChange.filter((span) => span.name === attempt.name).map((span) => span.spanId));
      const background = inChange.filter(
        (span) => span.name.startsWith('deliveries.claim') || span.name.startsWith('events.purge'),
      );
      const parentOf = ({ parentSpanId }: { parentSpanId: string }) =>
        parentSpanId === requestSpan.spanId
          ? 'the request'
          : attemptSpans.has(parentSpanId)
            ? 'an attempt'
            : parentSpanId;
      assert.deepEqual(
        background.map((span) => `${span.name} under ${parentOf(span)}`),
        [],
        "no claim or purge in the change's trace",
      );
      // An attempt's own children are its store calls: the secrets it signs with and its record.
      for (const child of inChange.filter((span) => attemptSpans.has(span.parentSpanId))) {
        assert.match(child.name, /^(webhooks|deliveries)\.(?!claim)/);
      }
    });

    test("a client's traceparent is the parent of the request's trace", async (t) => {
      const collector = await startOtlpReceiver(t);
      const env = cliEnv(await freshDatabaseUrl(t, backend), {
        ...AS_JSON,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      const key = await createKey(env, 'traced');
      const serve = await startServe(t, env);
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const parent = '00f067aa0ba902b7';
      const listed = await request(serve.url, 'GET', '/v1/pets', {
        key,
        headers: { traceparent: `00-${traceId}-${parent}-01` },
      });
      assert.equal(listed.status, 200);
      const span = await eventually('the span of GET /v1/pets', () =>
        collector.spans.find((candidate) => candidate.name === 'GET /v1/pets'),
      );
      assert.equal(span.traceId, traceId);
      assert.equal(span.parentSpanId, parent);
      const health = await request(serve.url, 'GET', '/healthz', {});
      assert.equal(health.status, 200);
      // Polled paths stay out of the traces; the store's spans of the list are the request's children.
      await eventually('the store span of the list', () =>
        collector.spans.find((candidate) => candidate.name === 'pets.list' && candidate.traceId === traceId),
      );
      assert.equal(
        collector.spans.some((candidate) => String(candidate.attributes['url.path']).startsWith('/healthz')),
        false,
      );
    });
  });
});

test("unless JSON is asked for, spans go as OTLP protobuf, the specification's default", async (t) => {
  const collector = await startOtlpReceiver(t);
  const env = cliEnv(await freshDatabaseUrl(t, BACKENDS[0] as StoreBackend), {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_SERVICE_NAME: 'petstore-in-protobuf',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  const key = await createKey(env, 'traced');
  const serve = await startServe(t, env);
  assert.equal((await request(serve.url, 'GET', '/v1/pets', { key })).status, 200);
  // Protobuf keeps strings as their bytes: the span's name and the service's are in the body as written.
  const exported = await eventually('a protobuf export of GET /v1/pets', () =>
    collector.protobuf.find((body) => body.includes('GET /v1/pets')),
  );
  assert.ok(exported.includes('petstore-in-protobuf'), 'the service named');
  assert.deepEqual([collector.spans, collector.refused], [[], []], 'no JSON export, nothing refused');
});
