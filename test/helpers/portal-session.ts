import assert from 'node:assert/strict';
import type { Harness } from './harness.js';

/**
 * A portal session of the key's owner, opened as the page opens one (a link's token traded for the cookie),
 * and a reader of `/portal/v1/events/{id}` through it.
 */
export async function portalSession(
  h: Harness,
  key: string,
): Promise<(eventId: string) => ReturnType<Harness['call']>> {
  const made = await h.call('POST', '/v1/webhooks/portal-links', { key });
  assert.equal(made.status, 201, made.text);
  const token = new URL(made.json.url).hash.slice(1);
  const traded = await h.call('POST', '/portal/session', { key: null, body: { token }, headers: { origin: h.url } });
  assert.equal(traded.status, 200, traded.text);
  const cookie = (traded.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return (eventId) => h.call('GET', `/portal/v1/events/${eventId}`, { key: null, headers: { cookie } });
}
