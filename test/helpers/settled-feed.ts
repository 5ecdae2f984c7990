import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

type Get = (path: string) => Promise<{ status: number; json: any; headers: Headers }>;

const SETTLE_TIMEOUT_MS = 5000;

/**
 * Waits until the feed (optionally with a query such as `type=pet.created`) holds at least `count` events,
 * and returns them. On PostgreSQL an event shows once every transaction that began writing before it has
 * ended (docs/decisions/feed-order-without-a-lock.md), and a key's first use writes its last-use time off the request path,
 * so a test that reads the feed right after its own writes may find the newest missing for a moment.
 */
export async function settledFeed(get: Get, count: number, query = ''): Promise<any[]> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const events: any[] = [];
    let path: string | undefined = `/v1/events?limit=100${query === '' ? '' : `&${query}`}`;
    while (path !== undefined) {
      const page = await get(path);
      assert.equal(page.status, 200);
      events.push(...page.json);
      const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      path = page.json.length < 100 || next === undefined ? undefined : next.slice(next.indexOf('/v1/'));
    }
    if (events.length >= count) return events;
    if (Date.now() > deadline) assert.fail(`the feed holds ${events.length} events, expected ${count}`);
    await sleep(20);
  }
}
