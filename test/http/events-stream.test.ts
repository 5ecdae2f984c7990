import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { waitUntil } from '../../dev/eventually.js';
import { buildApp } from '../../src/app.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { type CallResult, expectError } from '../helpers/calls.js';
import { recordEveryType, SENDS_LOCALLY } from '../helpers/every-event-type.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { isStream, openStream, type SseStream } from '../helpers/sse-client.js';
import { eachBackend, type StoreBackend } from '../helpers/stores.js';

/** For what happens in the service's own process: a quick look, often. */
const QUICK = { timeoutMs: 2000, everyMs: 10 };

/** The stream, failing the test when the answer was not one. */
async function stream(url: string, path: string, key: string, headers: Record<string, string> = {}) {
  const result = await openStream(url, path, { key, headers });
  assert.ok(isStream(result), `not a stream: ${(result as CallResult).status} ${(result as CallResult).text}`);
  return result;
}

/** Streams are closed by the test's end whatever happens to it. */
async function open(t: TestContext, h: Harness, path = '/v1/events', headers: Record<string, string> = {}) {
  const opened = await stream(h.url, path, h.keys.read, headers);
  t.after(() => opened.close());
  return opened;
}

/** The cursor of the feed's `Link: rel="next"`. */
function nextCursor(result: CallResult): string {
  const match = /<([^>]+)>; rel="next"/.exec(result.headers.get('link') ?? '');
  assert.ok(match);
  return new URL(match[1] as string, 'http://x').searchParams.get('cursor') as string;
}

/** Creates one pet and returns how long (ms) from sending the request to its frame's arrival on `on`. */
async function latencyOf(writer: Harness, on: SseStream, name: string): Promise<number> {
  const before = on.events().length;
  const sent = performance.now();
  await writer.createPets(1, () => ({ name, categoryId: 1 }));
  const [frame] = (await on.waitForEvents(before + 1, 5000)).slice(before);
  assert.equal(JSON.parse(frame?.data ?? '').data.name, name);
  return (frame?.at ?? Number.POSITIVE_INFINITY) - sent;
}

/** An app over a fresh store whose log lines are kept, with a key of every scope. */
async function loggedApp(t: TestContext, backend: StoreBackend) {
  const fixture = await backend.create();
  t.after(() => fixture.dispose());
  const lines: any[] = [];
  const logger = {
    level: 'info',
    stream: new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  };
  const app: FastifyInstance = await buildApp({ store: fixture.store, logger });
  t.after(() => app.close());
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const { key } = await issueApiKey(fixture.store, () => new Date(), { name: 'k' });
  return { app, url, key, lines };
}

/**
 * A stream whose client never reads: the response is paused at its headers, so what the server sends
 * fills the connection's buffers and then the server's. (Not reading, it does not see the close either.)
 * Resolves with its leave, which the test calls before the app closes: a stream nobody reads holds the close.
 */
function unreadStream(url: string, key: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      new URL('/v1/events', url),
      { headers: { accept: 'text/event-stream', authorization: `Bearer ${key}` }, agent: false },
      (response) => {
        assert.equal(response.statusCode, 200);
        response.pause();
        resolve(() => request.destroy());
      },
    );
    request.on('error', reject);
  });
}

/** Events created per round of the unread-client test. */
const ROUND = 100;

/** The bounds on streams, small; the buffer large enough never to drop a client that reads. */
const BOUNDS = { perOwner: 2, perProcess: 3, bufferBytes: 65_536 };

eachBackend((backend) => {
  describe(`events stream [${backend.name}]`, () => {
    test("streams beyond the owner's or the process's bound are 429; a stream that closes frees its slot", async (t) => {
      const h = await startHarness(t, backend, { eventStreams: BOUNDS });
      const first = await open(t, h);
      await open(t, h);
      const third = await openStream(h.url, '/v1/events', { key: h.keys.read });
      if (isStream(third)) third.close();
      assert.ok(!isStream(third), 'a third stream of one key was opened');
      const refusal = third as CallResult;
      assert.equal(
        expectError(refusal, 429, 'rate_limited'),
        "this API key's owner already has 2 event streams open, all its keys together, the most it may " +
          '(EVENT_STREAMS_PER_OWNER); close one first',
      );
      assert.equal(refusal.headers.get('retry-after'), '5');
      // Another key of the same owner shares its bound ...
      const sameOwner = await openStream(h.url, '/v1/events', { key: h.keys.all });
      if (isStream(sameOwner)) sameOwner.close();
      assert.ok(!isStream(sameOwner), 'a key of the same owner opened a third');
      // ... another owner's key has slots of its own, until the process has none left.
      const otherOwner = await h.issueKey('other', ['read'], 'other');
      await stream(h.url, '/v1/events', otherOwner).then((other) => t.after(() => other.close()));
      const full = (await openStream(h.url, '/v1/events', { key: otherOwner })) as CallResult;
      assert.match(expectError(full, 429, 'rate_limited'), /^this server already serves 3 event streams/);
      assert.equal(full.headers.get('retry-after'), '5');
      assert.equal(h.app.feedBell.listeners, 3, 'refused streams hold nothing');
      first.close();
      await waitUntil('a slot freed', () => h.app.feedBell.listeners === 2, QUICK);
      const again = await open(t, h);
      assert.equal(again.status, 200);
      // A refusal before the stream (400) gives its slot back too.
      again.close();
      await waitUntil('a slot freed', () => h.app.feedBell.listeners === 2, QUICK);
      const bad = await openStream(h.url, '/v1/events', { key: h.keys.read, headers: { 'last-event-id': 'x.y' } });
      expectError(bad as CallResult, 400, 'invalid_request');
      assert.equal((await open(t, h)).status, 200);
    });

    test('a client that never reads is dropped once its buffer is full; one that reads keeps its stream', async (t) => {
      const h = await startHarness(t, backend, { eventStreams: { ...BOUNDS, bufferBytes: 16_384 } });
      const leave = await unreadStream(h.url, h.keys.read);
      const reading = await open(t, h);
      let readingClosed: string | undefined;
      void reading.closed.then((how) => {
        readingClosed = how;
      });
      const dropped = () => h.app.feedBell.listeners < 2;
      // Enough events to fill the connection's buffers (the kernel's, a few MB on loopback) and then the
      // bound: written to the store directly, which is quicker. In rounds of 100 (about 50 KB) that the
      // reading client takes before the next: with rounds of 1,000 a reader on a loaded machine fell
      // behind by more than its socket's buffers hold, and was dropped too, as any client that slow is.
      const pet = (i: number) => ({ name: `${'x'.repeat(180)}-${i}`, categoryId: 1, status: 'available' as const });
      let created = 0;
      let wasDropped = false;
      try {
        while (!dropped() && created < 20_000) {
          await Promise.all(Array.from({ length: ROUND }, (_, i) => h.store.pets.create(pet(created + i))));
          created += ROUND;
          await waitUntil('the reading client keeps up', () => reading.events().length === created || dropped(), {
            timeoutMs: 10_000,
          });
        }
        wasDropped = dropped();
      } finally {
        leave();
      }
      t.diagnostic(`dropped after ${created} events of about 500 bytes`);
      assert.ok(wasDropped, `the unread stream is still open after ${created} events`);
      assert.equal(readingClosed, undefined, 'the stream dropped is the unread one');
      const events = await reading.waitForEvents(created, 30_000);
      assert.equal(events.length, created, 'the reading client got every event');
      await h.createPets(1);
      await reading.waitForEvents(created + 1, 5000);
      assert.equal(h.app.feedBell.listeners, 1, 'the reading stream is still open');
    });

    test('starts at the newest position; an event committed later arrives within 1 s, as the feed shows it', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(2, (i) => ({ name: `old-${i}`, categoryId: 1 }));
      const live = await open(t, h, '/v1/events', { 'x-request-id': 'stream-1' });
      assert.equal(live.headers['content-type'], 'text/event-stream; charset=utf-8');
      assert.equal(live.headers['x-accel-buffering'], 'no');
      assert.equal(live.headers['x-request-id'], 'stream-1');
      assert.equal(live.headers['x-content-type-options'], 'nosniff');
      assert.equal(live.headers['cache-control'], 'no-store');
      assert.equal(live.headers.connection, 'close');
      assert.equal(live.headers.link, undefined);
      const latencies = [];
      for (let i = 0; i < 5; i++) latencies.push(await latencyOf(h, live, `new-${i}`));
      t.diagnostic(
        `same instance, request sent to frame received: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`,
      );
      for (const ms of latencies) assert.ok(ms < 1000, `${ms} ms`);

      // Nothing older was replayed; each frame is the feed's event, serialised the same way.
      const frames = live.events();
      assert.deepEqual(
        frames.map((frame) => JSON.parse(frame.data as string).data.name),
        ['new-0', 'new-1', 'new-2', 'new-3', 'new-4'],
      );
      const feed = await h.call('GET', '/v1/events?limit=100');
      const items = (feed.json as any[]).slice(2);
      for (const [i, frame] of frames.entries()) {
        assert.equal(frame.event, items[i].type);
        assert.equal(frame.data, JSON.stringify(items[i]));
      }
      assert.ok(live.frames[0]?.comment !== undefined, 'a comment opens the stream');
    });

    test("each frame's event says what it is about, as the feed does, for every type", async (t) => {
      const h = await startHarness(t, backend, SENDS_LOCALLY);
      const live = await open(t, h);
      const expected = await recordEveryType(t, h);
      const frames = await live.waitForEvents(expected.length, 5000);
      assert.deepEqual(
        frames.map((frame) => [frame.event, JSON.parse(frame.data as string).subject]),
        expected,
      );
    });

    test('a stream on another instance gets events committed through the first within 1 s', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      const live = await open(t, other);
      const latencies = [];
      for (let i = 0; i < 5; i++) {
        latencies.push(await latencyOf(h, live, `a-${i}`));
        // Spread over the poll's phase: on SQLite the other instance learns of commits by looking.
        await sleep(37);
      }
      t.diagnostic(
        `other instance, request sent to frame received: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`,
      );
      for (const ms of latencies) assert.ok(ms < 1000, `${ms} ms`);
    });

    test('cursor and Last-Event-ID resume exactly after their event; each id is a feed cursor', async (t) => {
      const h = await startHarness(t, backend);
      await h.createPets(2);
      await settledFeed((path) => h.call('GET', path), 2);
      const afterTwo = nextCursor(await h.call('GET', '/v1/events?limit=2'));
      await h.createPets(3, (i) => ({ name: `later-${i}`, categoryId: 1 }));
      const fromCursor = await open(t, h, `/v1/events?cursor=${encodeURIComponent(afterTwo)}`);
      const frames = await fromCursor.waitForEvents(3);
      assert.deepEqual(
        frames.map((frame) => JSON.parse(frame.data as string).data.name),
        ['later-0', 'later-1', 'later-2'],
      );
      // The feed reads on from any frame's id.
      const afterFirst = await h.call('GET', `/v1/events?cursor=${encodeURIComponent(frames[0]?.id as string)}`);
      assert.deepEqual(
        afterFirst.json.map((event: any) => event.data.name),
        ['later-1', 'later-2'],
      );
      // Last-Event-ID wins over the cursor the URL still carries, as after an EventSource's reconnection.
      const resumed = await open(t, h, `/v1/events?cursor=${encodeURIComponent(afterTwo)}`, {
        'last-event-id': frames[1]?.id as string,
      });
      await h.createPets(1, () => ({ name: 'newest', categoryId: 1 }));
      const again = await resumed.waitForEvents(2);
      assert.deepEqual(
        again.map((frame) => JSON.parse(frame.data as string).data.name),
        ['later-2', 'newest'],
      );
      await sleep(300);
      assert.equal(resumed.events().length, 2, 'nothing repeated');
      assert.equal(fromCursor.events().length, 4);
    });

    test('more than one batch of backlog arrives in order, then live events', async (t) => {
      const h = await startHarness(t, backend);
      const start = nextCursor(await h.call('GET', '/v1/events'));
      await h.store.pets.create({ name: 'seed', categoryId: 1, status: 'available' });
      await Promise.all(
        Array.from({ length: 250 }, (_, i) => h.store.pets.create({ name: `b-${i}`, categoryId: 1, status: 'sold' })),
      );
      const live = await open(t, h, `/v1/events?cursor=${encodeURIComponent(start)}`);
      await h.createPets(1, () => ({ name: 'live', categoryId: 1 }));
      const frames = await live.waitForEvents(252, 10_000);
      const ids = frames.map((frame) => JSON.parse(frame.data as string).id);
      const feed = [];
      let cursor = start;
      for (;;) {
        const page = await h.call('GET', `/v1/events?limit=100&cursor=${encodeURIComponent(cursor)}`);
        feed.push(...page.json.map((event: any) => event.id));
        cursor = nextCursor(page);
        if (page.json.length < 100) break;
      }
      assert.deepEqual(ids, feed);
    });

    test('the type filter, and ids that resume only the same filter', async (t) => {
      const h = await startHarness(t, backend);
      const live = await open(t, h, '/v1/events?type=order.placed');
      const [pet] = await h.createPets(2);
      await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } });
      const [placed] = await live.waitForEvents(1);
      assert.equal(placed?.event, 'order.placed');
      await sleep(300);
      assert.equal(live.events().length, 1, 'only order.placed');
      const feed = await h.call('GET', `/v1/events?type=order.placed&cursor=${encodeURIComponent(placed?.id ?? '')}`);
      assert.deepEqual(feed.json, []);
      const plain = await openStream(h.url, '/v1/events', {
        key: h.keys.read,
        headers: { 'last-event-id': placed?.id as string },
      });
      assert.match(expectError(plain as CallResult, 400, 'invalid_request'), /Last-Event-ID.*type=order\.placed/);
    });

    test('PostgreSQL: with its listener cut off a stream still gets events within 1 s; it listens again', {
      skip: backend.name !== 'postgres' && 'LISTEN/NOTIFY is PostgreSQL only',
    }, async (t) => {
      const h = await startHarness(t, backend);
      const listeners = async () =>
        (
          await h.sql(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'petstore-listen' AND query LIKE 'LISTEN%'",
          )
        ).map((row) => row.pid as number);
      const others = new Set(await listeners());
      const ours = async () => (await listeners()).filter((pid) => !others.has(pid));
      const live = await open(t, h);
      await waitUntil('one stream of ours open', async () => (await ours()).length === 1);
      const [first] = await ours();
      await h.sql(`SELECT pg_terminate_backend(${first})`);
      const cutOff = await latencyOf(h, live, 'while-cut-off');
      t.diagnostic(`listener cut off: ${cutOff.toFixed(1)} ms`);
      assert.ok(cutOff < 1000, `${cutOff} ms`);
      await waitUntil('a new stream of ours listening', async () => {
        const now = await ours();
        return now.length === 1 && now[0] !== first;
      });
      const again = await latencyOf(h, live, 'listening-again');
      t.diagnostic(`listening again: ${again.toFixed(1)} ms`);
      assert.ok(again < 1000, `${again} ms`);
      // The last stream gone, the bell stops watching: no connection is left listening.
      live.close();
      await waitUntil('no stream of ours open', async () => (await ours()).length === 0);
    });

    test('keep-alive comments come at the configured interval', async (t) => {
      const h = await startHarness(t, backend, { eventStreamKeepAliveMs: 50 });
      const live = await open(t, h);
      await waitUntil(
        'three keep-alive comments',
        () => live.frames.filter((frame) => frame.comment === 'keep-alive').length >= 3,
        QUICK,
      );
      assert.equal(live.events().length, 0);
    });

    test('refusals answer before the stream, as JSON errors', async (t) => {
      const h = await startHarness(t, backend);
      const url = h.url;
      expectError((await openStream(url, '/v1/events', { key: null })) as CallResult, 401, 'unauthorized');
      expectError((await openStream(url, '/v1/events', { key: h.keys.write })) as CallResult, 403, 'forbidden');
      for (const query of ['?cursor=abc.def', '?cursor=', '?type=pet.removed', '?since=1']) {
        const refused = await openStream(url, `/v1/events${query}`, { key: h.keys.read });
        expectError(refused as CallResult, 400, 'invalid_request');
      }
      const badHeader = await openStream(url, '/v1/events', { key: h.keys.read, headers: { 'last-event-id': 'x.y' } });
      assert.match(expectError(badHeader as CallResult, 400, 'invalid_request'), /header "Last-Event-ID"/);

      const start = nextCursor(await h.call('GET', '/v1/events'));
      await h.createPets(2);
      await h.store.events.purge(new Date(Date.now() + 60_000), new Date());
      const expired = `/v1/events?cursor=${encodeURIComponent(start)}`;
      assert.match(
        expectError((await openStream(url, expired, { key: h.keys.read })) as CallResult, 410, 'gone'),
        /kept 30 days/,
      );
      const expiredHeader = await openStream(url, '/v1/events', {
        key: h.keys.read,
        headers: { 'last-event-id': start },
      });
      expectError(expiredHeader as CallResult, 410, 'gone');
      assert.equal(h.app.feedBell.listeners, 0);
    });

    test('Accept decides: JSON unless text/event-stream is named and preferred; HEAD never streams', async (t) => {
      const h = await startHarness(t, backend);
      for (const accept of ['application/json', '*/*', 'text/event-stream;q=0', 'text/event-stream;q=0.5, */*']) {
        const result = await h.call('GET', '/v1/events', { headers: { accept } });
        assert.equal(result.status, 200);
        assert.match(result.headers.get('content-type') ?? '', /^application\/json/, accept);
      }
      const both = await open(t, h, '/v1/events', { accept: 'application/json;q=0.5, text/event-stream' });
      assert.equal(both.headers['content-type'], 'text/event-stream; charset=utf-8');
      both.close();
      const head = await h.call('HEAD', '/v1/events', { headers: { accept: 'text/event-stream' } });
      assert.equal(head.status, 200);
      await waitUntil('no feed listener', () => h.app.feedBell.listeners === 0, QUICK);
    });

    test('a client that leaves frees its stream; its request line is logged', async (t) => {
      const { app, url, key, lines } = await loggedApp(t, backend);
      const live = await stream(url, '/v1/events', key, { 'x-request-id': 'leaver' });
      const second = await stream(url, '/v1/events', key);
      t.after(() => second.close());
      assert.equal(app.feedBell.listeners, 2);
      live.close();
      await waitUntil('one feed listener', () => app.feedBell.listeners === 1, QUICK);
      second.close();
      await waitUntil('no feed listener', () => app.feedBell.listeners === 0, QUICK);
      await waitUntil(
        'the request line of the one who left',
        () => lines.some((line) => line.requestId === 'leaver' && line.msg === 'request'),
        QUICK,
      );
      const line = lines.find((each) => each.requestId === 'leaver' && each.msg === 'request');
      assert.equal(line.operation, 'listEvents');
      assert.equal(line.status, 200);
      assert.equal(line.closedByClient, true);
      assert.deepEqual(
        lines.filter((each) => each.level >= 40),
        [],
      );
    });

    test('a graceful stop ends open streams cleanly and the app closes promptly', async (t) => {
      const { app, url, key, lines } = await loggedApp(t, backend);
      const live = await stream(url, '/v1/events', key, { 'x-request-id': 'stopped' });
      const started = performance.now();
      await app.stopGracefully();
      const took = performance.now() - started;
      assert.equal(await live.closed, 'end', 'the client saw the end, not a reset');
      t.diagnostic(`stopGracefully with an open stream took ${took.toFixed(0)} ms`);
      assert.ok(took < 2500, `${took} ms`);
      assert.equal(app.feedBell.listeners, 0);
      const line = lines.find((each) => each.requestId === 'stopped' && each.msg === 'request');
      assert.equal(line?.status, 200);
      assert.deepEqual(
        lines.filter((each) => each.level >= 40),
        [],
      );
    });
  });
});
