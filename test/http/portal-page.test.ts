import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import { issueApiKey } from '../../src/services/api-keys.js';
import { expectError } from '../helpers/calls.js';
import { startHarness } from '../helpers/harness.js';
import {
  alertText,
  createEndpoint,
  endpointsOf,
  hasCount,
  NARROW,
  noBrowser,
  OPTIONS,
  OUTPUT_DIR,
  onPage,
  openPage,
  openPortal,
  portalLink,
  statusSays,
  UNLABELLED,
  WIDTHS,
} from '../helpers/portal-browser.js';
import { BACKENDS, eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { deliveryLog, hmacVerifies, verifiedBy } from '../helpers/webhooks.js';

/**
 * The webhook portal's page in a real browser (Debian's Chromium through playwright-core), against the service
 * on each store: what a partner does with a portal link, what the page sends, and what it refuses to load.
 */

/**
 * Another origin on the same host: a page on a port of its own that posts to each URL as a cross-site forgery
 * does (`no-cors`, no body, the browser's cookies). Returns its address.
 */
async function startAttacker(t: TestContext, targets: readonly string[]): Promise<string> {
  const html = `<!doctype html><title>elsewhere</title><script>
    for (const url of ${JSON.stringify(targets)}) fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include' });
  </script>`;
  const server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/html' }).end(html),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** The `<input type="datetime-local">` value of a time, in this machine's zone (the browser's too). */
function localInput(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}` +
    `T${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`
  );
}

describe('/portal, over HTTP', () => {
  test('the page and its assets are public, served by the service under a strict policy', async (t) => {
    // The same whatever the store.
    const h = await startHarness(t, BACKENDS[0] as (typeof BACKENDS)[number]);
    const page = await h.call('GET', '/portal', { key: null });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    assert.doesNotMatch(page.text, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(page.text, /\sstyle=|<style/, 'no inline style');
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    assert.deepEqual(assets.sort(), ['/portal/assets/main.js', '/portal/assets/portal.css']);
    for (const response of [page, ...(await Promise.all(assets.map((a) => h.call('GET', a, { key: null }))))]) {
      assert.equal(response.status, 200);
      const policy = response.headers.get('content-security-policy') ?? '';
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
      ]) {
        assert.ok(policy.includes(directive), `${directive} in ${policy}`);
      }
      assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval|\*/);
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    }
    const script = await h.call('GET', '/portal/assets/main.js', { key: null });
    assert.match(script.headers.get('content-type') ?? '', /^text\/javascript; charset=utf-8/);
    const style = await h.call('GET', '/portal/assets/portal.css', { key: null });
    assert.match(style.headers.get('content-type') ?? '', /^text\/css; charset=utf-8/);
    // Revalidated, not fetched again, while unchanged.
    const tag = script.headers.get('etag') ?? '';
    assert.ok(tag !== '', 'an ETag');
    const same = await h.call('GET', '/portal/assets/main.js', { key: null, headers: { 'if-none-match': tag } });
    assert.equal(same.status, 304);
    // Only the built scripts and styles: no source, no map, nothing else.
    for (const missing of ['/portal/assets/main.ts', '/portal/assets/index.html', '/portal/assets/main.js.map']) {
      expectError(await h.call('GET', missing, { key: null }), 404, 'not_found');
    }
    // From the page's own origin (any other is 403 first: portal-api.test.ts).
    const refused = await h.call('POST', '/portal/assets/main.js', { key: null, headers: { origin: h.url } });
    assert.equal(refused.status, 405);
  });
});

eachBackend((backend) => {
  describe(`/portal in a browser [${backend.name}]`, { skip: noBrowser, timeout: 180_000 }, () => {
    test('a link opens the portal once: its token leaves the address bar and never reaches a URL', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const { page, requests, problems, token } = await openPortal(t, h);
      assert.equal(page.url(), `${h.url}/portal`, 'the fragment is gone from the address bar');
      assert.match((await page.locator('#who').textContent()) ?? '', /Endpoints of \S+; this session ends at /);

      for (const request of requests) {
        assert.ok(!request.url.includes(token), `the token in ${request.url}`);
        assert.equal(request.referer ?? '', '', `a Referer on ${request.url}`);
      }
      const exchanges = requests.filter((request) => request.body?.includes(token));
      assert.deepEqual(
        exchanges.map((request) => `${request.method} ${new URL(request.url).pathname} ${request.body}`),
        [`POST /portal/session ${JSON.stringify({ token })}`],
        'the token goes once, in the body of the session request',
      );

      // The cookie keeps the session: a reload needs no link.
      await page.reload();
      await page.getByRole('heading', { name: 'Your webhook endpoints' }).waitFor();

      // The same link again, in another browser: refused, and the page says to ask for a new one.
      const again = await openPage(t, `${h.url}/portal#${token}`);
      await again.page.getByRole('heading', { name: 'Ask for a new link' }).waitFor();
      const refusal = await h.call('POST', '/portal/session', {
        key: null,
        body: { token },
        headers: { origin: h.url },
      });
      const message = expectError(refusal, 401, 'unauthorized');
      assert.equal(await again.page.locator('#ended-reason').textContent(), `The service said: ${message}`);
      assert.equal(await again.page.locator('#portal').isHidden(), true);

      // No link and no cookie: the same page.
      const bare = await openPage(t, `${h.url}/portal`);
      await bare.page.getByRole('heading', { name: 'Ask for a new link' }).waitFor();

      // The session ending while the page is open: the next call is 401, and the page says so.
      await page.context().clearCookies();
      await page.getByLabel('URL the events are sent to').fill('http://127.0.0.1:9/in');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('heading', { name: 'Ask for a new link' }).waitFor();

      assert.deepEqual([...problems, ...again.problems, ...bare.problems], []);
      // Trusted Types: the browser itself refuses markup put into the page.
      await assert.rejects(
        bare.page.evaluate('document.body.insertAdjacentHTML("beforeend", "<b>markup</b>")'),
        /requires 'TrustedHTML' assignment/,
      );
    });

    test('a link past its time, and a session past it, show the page that asks for a new link', async (t) => {
      let now = Date.now();
      const h = await startHarness(t, backend, { ...OPTIONS, clock: () => new Date(now) });
      const late = await portalLink(h);
      const { page } = await openPortal(t, h);
      // PORTAL_LINK_TTL (15 minutes) later, by the service's clock.
      now += 15 * 60_000 + 1000;
      const expired = await openPage(t, late.url);
      await expired.page.getByRole('heading', { name: 'Ask for a new link' }).waitFor();
      assert.match((await expired.page.locator('#ended-reason').textContent()) ?? '', /expired.*ask for a new link/);
      // The open page's session ended with its link's time: its next call is refused, and it says so.
      await page.reload();
      await page.getByRole('heading', { name: 'Ask for a new link' }).waitFor();
      assert.equal(await page.locator('#portal').isHidden(), true);
      assert.deepEqual(expired.problems, []);
    });

    test('every action on an endpoint, from the keyboard and the mouse, at 360 px too', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t);
      const { page, problems } = await openPortal(t, h);
      assert.deepEqual(await page.evaluate(UNLABELLED), []);

      // The event types offered are the service's, the default ones checked.
      const boxes = page.locator('#create-events input[type="checkbox"]');
      const offered = await boxes.evaluateAll((all) => all.map((box) => [(box as any).value, (box as any).checked]));
      assert.deepEqual(
        offered,
        EVENT_TYPES.map((type) => [type, type !== 'webhook_endpoint.disabled']),
      );

      // A refusal shows the service's own message.
      const refusedUrl = 'http://user:password@127.0.0.1:9/in';
      await page.getByLabel('URL the events are sent to').fill(refusedUrl);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const refusal = await h.call('POST', '/v1/webhooks', { body: { url: refusedUrl } });
      const message = expectError(refusal, 400, 'invalid_request');
      await page.locator('#alert').filter({ hasText: message }).waitFor();
      assert.equal(await alertText(page), message);

      // Create: the secret shown once, with a copy button.
      const create = page.locator('#create-form');
      await create.getByLabel('URL the events are sent to').fill(`${receiver.url}/first`);
      await create.getByLabel('Description (optional)').fill('Main receiver <b>not markup</b>');
      await create.getByLabel('order.placed').uncheck();
      await create.getByLabel('webhook_endpoint.disabled').check();
      // Delivery order: by subject unless the reader chooses otherwise, said in the control's own words.
      const createOrder = create.getByRole('combobox', { name: 'Delivery order' });
      assert.equal(await createOrder.inputValue(), 'subject');
      assert.deepEqual(await createOrder.locator('option').allTextContents(), [
        'One subject at a time, in order (recommended)',
        'All at once, any order',
      ]);
      await createOrder.selectOption({ label: 'All at once, any order' });
      await create.getByLabel('Rate limit, attempts a second (optional)').fill('5');
      await create.getByRole('button', { name: 'Add endpoint' }).click();
      await statusSays(page, /is added/);
      const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      assert.match(secret, /^whsec_/);
      assert.match((await page.locator('#create-secret').textContent()) ?? '', /will not be shown again/);
      await page.getByRole('button', { name: 'Copy secret' }).click();
      await page.locator('#create-secret').getByText('Copied.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      assert.equal(await onPage(page, secret), false, 'the secret has left the page');

      const [endpoint, ...others] = await endpointsOf(h);
      assert.deepEqual(others, []);
      assert.equal(endpoint.url, `${receiver.url}/first`);
      assert.equal(endpoint.description, 'Main receiver <b>not markup</b>');
      // The default types but order.placed, with the one not checked by default.
      assert.deepEqual([...endpoint.events].sort(), EVENT_TYPES.filter((type) => type !== 'order.placed').sort());
      assert.equal(endpoint.ordering, 'none');
      assert.equal(endpoint.rateLimit, 5);
      assert.equal(await createOrder.inputValue(), 'subject', 'the form is reset to the default');
      const card = page.locator('#list > li').filter({ hasText: endpoint.url });
      assert.equal(await card.locator('.ordering').textContent(), 'Delivery order: All at once, any order');
      assert.equal(await card.locator('.rate-limit').textContent(), 'Rate limit: 5 attempts a second');
      assert.equal(await card.locator('.description').textContent(), 'Main receiver <b>not markup</b>', 'as text');
      assert.equal(await card.locator('b').count(), 0);

      // The secret signs what is sent; the list shows the last attempt.
      await h.createPets(1);
      await receiver.until((got) => got.length === 1, 5000);
      new Webhook(secret).verify(receiver.received[0]?.body ?? '', receiver.received[0]?.headers ?? {});
      await page.reload();
      await card
        .locator('.last-attempt')
        .filter({ hasText: /Succeeded \(answered 204\) at/ })
        .waitFor();

      // Manage: the endpoint's page, its heading focused.
      await card.getByRole('button', { name: `Manage the endpoint ${endpoint.url}` }).click();
      const title = page.locator('#endpoint-title');
      await title.filter({ hasText: endpoint.url }).waitFor();
      assert.equal(await page.evaluate('document.activeElement.id'), 'endpoint-title');
      assert.equal(await page.locator('#list-section').isHidden(), true);
      assert.deepEqual(await page.evaluate(UNLABELLED), []);
      const ordering = page.locator('#endpoint-ordering');
      assert.equal(await ordering.textContent(), 'Delivery order: All at once, any order');
      const edit = page.locator('#edit-form');
      const editOrder = edit.getByRole('combobox', { name: 'Delivery order' });
      assert.equal(await editOrder.inputValue(), 'none');

      // Back to one subject at a time, alone: only the ordering is sent.
      await editOrder.selectOption({ label: 'One subject at a time, in order (recommended)' });
      const saved = page.waitForRequest((request) => request.method() === 'PATCH');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      assert.equal((await saved).postData(), JSON.stringify({ ordering: 'subject' }));
      await statusSays(page, /^Saved\.$/);
      assert.equal((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json.ordering, 'subject');
      assert.equal(await ordering.textContent(), 'Delivery order: One subject at a time, in order');
      assert.equal(await editOrder.inputValue(), 'subject');

      // The rate limit: shown, changed alone, and cleared by emptying it.
      const rateLimit = page.locator('#endpoint-rate-limit');
      assert.equal(await rateLimit.textContent(), 'Rate limit: 5 attempts a second');
      const editLimit = edit.getByLabel('Rate limit, attempts a second (empty: none)');
      assert.equal(await editLimit.inputValue(), '5');
      for (const [typed, sent, shown] of [
        ['1', 1, 'Rate limit: 1 attempt a second'],
        ['', null, 'Rate limit: none'],
      ] as const) {
        await editLimit.fill(typed);
        const limitSaved = page.waitForRequest((request) => request.method() === 'PATCH');
        await edit.getByRole('button', { name: 'Save changes' }).click();
        assert.equal((await limitSaved).postData(), JSON.stringify({ rateLimit: sent }));
        await statusSays(page, /^Saved\.$/);
        assert.equal((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json.rateLimit, sent);
        assert.equal(await rateLimit.textContent(), shown);
      }

      // Change the URL, the events and the description (emptied: cleared).
      await edit.getByLabel('URL', { exact: true }).fill(`${receiver.url}/second`);
      await edit.getByLabel('Description (empty clears it)').fill('');
      await edit.getByLabel('order.placed').check();
      await edit.getByLabel('webhook_endpoint.disabled').uncheck();
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await statusSays(page, /^Saved\.$/);
      const changed = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json;
      assert.equal(changed.url, `${receiver.url}/second`);
      assert.equal(changed.description, null);
      assert.deepEqual([...changed.events].sort(), EVENT_TYPES.filter((e) => e !== 'webhook_endpoint.disabled').sort());
      assert.equal(await title.textContent(), `${receiver.url}/second`);

      // Disable, a test send that waits, enable: the test goes.
      await page.getByRole('button', { name: 'Disable endpoint' }).click();
      await statusSays(page, /^Disabled/);
      const disabled = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json;
      assert.deepEqual([disabled.enabled, disabled.disabledReason], [false, 'manual']);
      assert.match((await page.locator('#endpoint-state').textContent()) ?? '', /^Disabled \(by a change\) since /);
      await page.getByRole('button', { name: 'Send a test event' }).click();
      await statusSays(page, /will be sent once the endpoint is enabled/);
      await page.getByRole('button', { name: 'Enable endpoint' }).click();
      await statusSays(page, /^Enabled/);
      assert.equal((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json.enabled, true);
      await receiver.until((got) => got.some((request) => request.body.includes('"webhook.test"')), 5000);

      // Rotate: the new secret once, until when the old one signs; the next delivery verifies with it.
      await page.getByRole('button', { name: 'Rotate the signing secret' }).click();
      await page.locator('#endpoint-secret').getByText('will not be shown again').waitFor();
      const rotated = await page
        .locator('#endpoint-secret')
        .getByRole('textbox', { name: 'Signing secret' })
        .inputValue();
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      assert.match(
        (await page.locator('#endpoint-secret').textContent()) ?? '',
        /The previous secret also signs every delivery until .+; then only this one does\./,
      );
      receiver.reset();
      await page.getByRole('button', { name: 'Send a test event' }).click();
      await statusSays(page, /is on its way/);
      await receiver.until((got) => got.length === 1, 5000);
      new Webhook(rotated).verify(receiver.received[0]?.body ?? '', receiver.received[0]?.headers ?? {});
      await page.locator('#endpoint-secret').getByRole('button', { name: 'I have saved it' }).click();

      // At 360 px, on the endpoint's page and on the list: nothing scrolls sideways.
      await mkdir(OUTPUT_DIR, { recursive: true });
      await page.setViewportSize(NARROW);
      const [endpointWidth] = (await page.evaluate(WIDTHS)) as number[];
      assert.ok((endpointWidth ?? Infinity) <= NARROW.width, `the endpoint's page is ${endpointWidth} px wide`);
      await page.screenshot({ path: path.join(OUTPUT_DIR, `portal-endpoint-${backend.name}.png`), fullPage: true });

      // Delete: asked first. Escape cancels; Tab to Delete and Enter confirm, all from the keyboard.
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Cancel');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assert.equal((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).status, 200, 'still there');
      await page.getByRole('button', { name: 'Delete endpoint' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Delete');
      await page.keyboard.press('Enter');
      await statusSays(page, /is deleted/);
      expectError(await h.call('GET', `/v1/webhooks/${endpoint.id}`), 404, 'not_found');
      assert.equal(await page.evaluate('document.activeElement.id'), 'list-title', 'back on the list');

      // The list at 360 px, with text that is one long word.
      await createEndpoint(h, { url: `${receiver.url}/${'long-path-'.repeat(20)}`, description: 'x'.repeat(200) });
      await page.reload();
      await page.locator('#list > li').first().waitFor();
      const [listWidth] = (await page.evaluate(WIDTHS)) as number[];
      assert.ok((listWidth ?? Infinity) <= NARROW.width, `the list is ${listWidth} px wide`);
      const screenshot = path.join(OUTPUT_DIR, `portal-${backend.name}.png`);
      await page.screenshot({ path: screenshot, fullPage: true });
      t.diagnostic(`screenshots: ${screenshot}, portal-endpoint-${backend.name}.png`);
      assert.deepEqual(problems, []);
    });

    test('the delivery log: pages, filters, send again, and a recovery since a time', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      let failing = false;
      const receiver = await startReceiver(t, () => ({ status: failing ? 500 : 204 }));
      const endpoint = await createEndpoint(h, { url: receiver.url, events: ['pet.created'] });
      const before = new Date(Date.now() - 60_000);
      await h.createPets(21);
      await receiver.until((got) => got.length === 21, 10_000);
      failing = true;
      await h.createPets(2);
      // Each failing event: attempt 1 pending, attempt 2 (after 50 ms) failed.
      await receiver.until((got) => got.length === 25, 10_000);
      for (let i = 0; (await deliveryLog(h, endpoint.id)).length < 25 && i < 100; i++) await sleep(20);
      const failed = (await deliveryLog(h, endpoint.id)).filter((entry) => entry.status === 'failed');
      assert.equal(failed.length, 2);
      failing = false;

      const { page, problems } = await openPortal(t, h);
      const card = page.locator('#list > li').first();
      await card
        .locator('.last-attempt')
        .filter({ hasText: /Failed \(answered 500\) at/ })
        .waitFor();
      await card.getByRole('button', { name: /^Manage/ }).click();
      const entries = page.locator('#deliveries > li');
      await entries.nth(19).waitFor();
      assert.equal(await entries.count(), 20, 'a page of 20');
      assert.match(
        (await entries.first().textContent()) ?? '',
        /^Failed \(answered 500\) at .*Attempt 2, sent for its event/,
      );
      await page.getByRole('button', { name: 'Show older attempts' }).click();
      await entries.nth(24).waitFor();
      assert.equal(await entries.count(), 25);
      assert.equal(await page.getByRole('button', { name: 'Show older attempts' }).isHidden(), true, 'no more');
      assert.equal(
        await page.evaluate('document.activeElement === document.querySelectorAll("#deliveries > li")[20]'),
        true,
      );

      // Filters: by outcome, by event.
      await page.getByLabel('Outcome').selectOption('failed');
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await entries.nth(1).waitFor();
      await hasCount(entries, 2);
      const [first, second] = failed;
      await page.getByLabel('Outcome').selectOption('');
      await page.getByLabel('Event id (optional)').fill(first.eventId);
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await hasCount(entries, 2);
      // Attempt 1 was retried: it says when, and promises no next try.
      const retried = (await entries.nth(1).locator('.delivery-outcome').textContent()) ?? '';
      assert.match(retried, /^Failed \(answered 500\) at .+; tried again at .+$/);

      // Send again: the first failed event, now to a receiver that answers.
      const again = entries.first().getByRole('button', { name: 'Send again', exact: true });
      assert.match((await again.getAttribute('aria-describedby')) ?? '', /^delivery-event-/);
      await again.click();
      await statusSays(page, new RegExp(`Event ${first.eventId} will be sent again`));
      await receiver.until((got) => got.length === 26, 5000);
      await page.getByRole('button', { name: 'Show', exact: true }).click();
      await hasCount(entries, 3);
      assert.match((await entries.first().textContent()) ?? '', /^Succeeded \(answered 204\).*sent again on request/);

      // Recover since a time: the other failed event goes again.
      await page.getByLabel('Of events since (your local time)').fill(localInput(before));
      const answered = page.waitForResponse((response) => response.url().endsWith(`/${endpoint.id}/recover`));
      await page.getByRole('button', { name: 'Send them again' }).click();
      const accepted = await (await answered).json();
      assert.ok(accepted.queued >= 1, `queued ${accepted.queued}`);
      const said = await statusSays(page, /will be sent again, oldest first/);
      assert.match(said, new RegExp(`^${accepted.queued} failed deliver`));
      await receiver.until(
        (got) => got.some((request) => request.headers['webhook-id'] === second.eventId && got.indexOf(request) >= 25),
        5000,
      );
      assert.deepEqual(problems, []);
    });

    test('an Ed25519 endpoint shows its public key, and the previous one after a rotation; never a secret', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t);
      const endpoint = await createEndpoint(h, { url: `${receiver.url}/keys`, signature: 'ed25519' });
      const { page, problems } = await openPortal(t, h);
      const card = page.locator('#list > li').filter({ hasText: endpoint.url });
      await card.getByRole('button', { name: `Manage the endpoint ${endpoint.url}` }).click();
      const signature = page.locator('#endpoint-signature');
      await signature.getByText('Ed25519').waitFor();
      assert.deepEqual(await signature.locator('.public-key').allTextContents(), [endpoint.publicKey]);

      await page.getByRole('button', { name: 'Rotate the signing secret' }).click();
      await statusSays(page, /^New key pair/);
      const rotated = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json;
      assert.equal(rotated.previousPublicKey, endpoint.publicKey);
      await hasCount(signature.locator('.public-key'), 2);
      assert.deepEqual(await signature.locator('.public-key').allTextContents(), [
        rotated.publicKey,
        endpoint.publicKey,
      ]);
      assert.match((await signature.textContent()) ?? '', /Previous public key: .+It also signs every delivery until /);
      assert.equal(await page.locator('#endpoint-secret').textContent(), '', 'no secret panel');
      assert.deepEqual(problems, []);
    });

    test('an endpoint added with Ed25519 from the form verifies by its key; moved to HMAC, by the secret shown once', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t);
      const { page, problems } = await openPortal(t, h);
      const create = page.locator('#create-form');
      await create.getByLabel('URL the events are sent to').fill(`${receiver.url}/signed`);
      const createSignature = create.getByRole('combobox', { name: 'Signatures' });
      assert.equal(await createSignature.inputValue(), 'hmac', 'HMAC unless the reader chooses otherwise');
      await createSignature.selectOption({ label: 'Ed25519 with a public key (v1a)' });
      await create.getByRole('button', { name: 'Add endpoint' }).click();
      await statusSays(page, /is added; Manage it to see the public key/);
      assert.equal(await page.locator('#create-secret').textContent(), '', 'no secret to show');
      const [endpoint] = await endpointsOf(h);
      assert.equal(endpoint.signature, 'ed25519');

      await page.getByRole('button', { name: `Manage the endpoint ${endpoint.url}` }).click();
      const signature = page.locator('#endpoint-signature');
      assert.deepEqual(await signature.locator('.public-key').allTextContents(), [endpoint.publicKey]);
      await page.getByRole('button', { name: 'Send a test event' }).click();
      await receiver.until((got) => got.length === 1, 5000);
      assert.equal(verifiedBy(endpoint.publicKey, receiver.received[0]), 1, 'signed by its key');

      // Back to HMAC: only the signature is sent; the new secret is shown once, and the key signs beside it.
      const edit = page.locator('#edit-form');
      const editSignature = edit.getByRole('combobox', { name: 'Signatures' });
      assert.equal(await editSignature.inputValue(), 'ed25519');
      await editSignature.selectOption({ label: 'HMAC with a shared secret (v1)' });
      const saved = page.waitForRequest((request) => request.method() === 'PATCH');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      assert.equal((await saved).postData(), JSON.stringify({ signature: 'hmac' }));
      const panel = page.locator('#endpoint-secret');
      const secret = await panel.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      assert.match(secret, /^whsec_/);
      assert.match(
        (await panel.textContent()) ?? '',
        /The Ed25519 key also signs every delivery until .+; then only this one does\./,
      );
      receiver.reset();
      await page.getByRole('button', { name: 'Send a test event' }).click();
      await receiver.until((got) => got.length === 1, 5000);
      assert.ok(hmacVerifies(secret, receiver.received[0]), 'the secret shown verifies it');
      assert.equal(verifiedBy(endpoint.publicKey, receiver.received[0]), 1, 'and the key still does');
      await panel.getByRole('button', { name: 'I have saved it' }).click();
      assert.equal(await onPage(page, secret), false, 'the secret has left the page');
      assert.equal((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json.signature, 'hmac');

      // And to Ed25519 again: a new key, shown on the page, no secret.
      await editSignature.selectOption({ label: 'Ed25519 with a public key (v1a)' });
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await statusSays(page, /^Saved: its deliveries are signed with Ed25519/);
      const moved = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json;
      assert.notEqual(moved.publicKey, endpoint.publicKey);
      assert.equal((await signature.locator('.public-key').allTextContents())[0], moved.publicKey);
      assert.equal(await panel.textContent(), '');
      assert.deepEqual(problems, []);
    });

    test('an owner sees and reaches only its own endpoints', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t);
      const clock = () => new Date();
      const other = (await issueApiKey(h.store, clock, { name: 'globex', owner: 'globex' })).key;
      const own = await createEndpoint(h, { url: `${receiver.url}/own` });
      const theirs = await createEndpoint(h, { url: `${receiver.url}/theirs` }, other);
      assert.notEqual(own.owner, theirs.owner);

      const { page, problems } = await openPortal(t, h);
      await page.locator('#list > li').first().waitFor();
      assert.deepEqual(await page.locator('#list h3').allTextContents(), [own.url]);
      assert.match((await page.locator('#who').textContent()) ?? '', new RegExp(`^Endpoints of ${own.owner};`));

      // Asked by hand from the page's session: the other owner's endpoint does not exist for it.
      const statuses = await page.evaluate(`Promise.all([
        ['GET', ''], ['PATCH', '', { enabled: false }], ['DELETE', ''], ['GET', '/deliveries'],
        ['POST', '/test'], ['POST', '/rotate-secret'], ['POST', '/resend', { eventId: 'evt_1' }],
        ['POST', '/recover', { since: new Date(Date.now() - 60000).toISOString() }],
      ].map(([method, path, body]) => fetch('/portal/v1/webhooks/${theirs.id}' + path, {
        method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
      }).then((response) => response.status)))`);
      assert.deepEqual(statuses, [404, 404, 404, 404, 404, 404, 404, 404]);
      const untouched = (await h.call('GET', `/v1/webhooks/${theirs.id}`, { key: other })).json;
      assert.deepEqual(
        [untouched.enabled, untouched.previousSecretExpiresAt],
        [true, null],
        'not disabled, not rotated',
      );

      // The other owner's link shows the other owner's endpoints.
      const otherPortal = await openPortal(t, h, other);
      await otherPortal.page.locator('#list > li').first().waitFor();
      assert.deepEqual(await otherPortal.page.locator('#list h3').allTextContents(), [theirs.url]);
      assert.deepEqual([...problems, ...otherPortal.problems], []);
    });

    test('the changes: who changed the owner’s endpoints and links, newest first, the owner’s only', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t);
      const other = (await issueApiKey(h.store, () => new Date(), { name: 'globex', owner: 'globex' })).key;
      const own = await createEndpoint(h, { url: `${receiver.url}/own`, description: 'before' });
      const theirs = await createEndpoint(h, { url: `${receiver.url}/theirs` }, other);
      const { page, problems } = await openPortal(t, h);
      const changes = page.locator('#changes > li');
      await changes.first().waitFor();
      const shown = async () => (await changes.allTextContents()).join('\n');
      assert.match(await shown(), /API key "all": webhook_endpoint\.created/);
      assert.match(await shown(), /the portal: portal_session\.opened/);
      assert.doesNotMatch(await shown(), new RegExp(`webhook endpoint ${theirs.id}\\b`), 'not the other owner’s');

      // A change by the page's own session, then the newest first once asked for.
      const status = await page.evaluate(`fetch('/portal/v1/webhooks/${own.id}', { method: 'PATCH',
        headers: { 'content-type': 'application/json' }, body: JSON.stringify({ description: 'after' }) })
        .then((response) => response.status)`);
      assert.equal(status, 200);
      await page.getByRole('button', { name: 'Show the latest changes' }).click();
      await changes.first().filter({ hasText: 'webhook_endpoint.updated' }).waitFor();
      const newest = (await changes.first().textContent()) ?? '';
      assert.match(newest, /the portal: webhook_endpoint\.updated/);
      assert.match(newest, /description: before → after/);
      assert.deepEqual(problems, []);
    });

    test('a page of another origin on the same host cannot act for a session, even without a body', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t);
      const endpoint = await createEndpoint(h, { url: `${receiver.url}/in` });
      const { page, problems } = await openPortal(t, h);
      // Another port of 127.0.0.1: another origin, but the same site, so SameSite=Strict sends the cookie.
      const targets = ['rotate-secret', 'test'].map((action) => `${h.url}/portal/v1/webhooks/${endpoint.id}/${action}`);
      const attacker = await startAttacker(t, targets);
      const forged = await page.context().newPage();
      const answered = Promise.all(targets.map((url) => forged.waitForResponse(url)));
      await forged.goto(attacker);
      const statuses = (await answered).map((response) => response.status());
      await forged.close();
      // The browser sends the session's cookie with both: without the origin check they were 200 and 202.
      assert.deepEqual(statuses, [403, 403]);
      const after = await h.call('GET', `/v1/webhooks/${endpoint.id}`);
      assert.equal(after.json.previousSecretExpiresAt, null, 'the secret was not rotated');
      // A test sent now is the only one the receiver gets: none was queued before it.
      const sent = await h.call('POST', `/v1/webhooks/${endpoint.id}/test`);
      assert.equal(sent.status, 202, sent.text);
      await receiver.until((got) => got.length > 0, 5000);
      assert.deepEqual(
        receiver.received.map((request) => request.headers['webhook-id']),
        [sent.json.eventId],
      );
      // The page itself, same-origin, still rotates.
      const rotated = await page.evaluate(
        `fetch('/portal/v1/webhooks/${endpoint.id}/rotate-secret', { method: 'POST' }).then((r) => r.status)`,
      );
      assert.equal(rotated, 200);
      assert.deepEqual(problems, []);
    });
  });
});
