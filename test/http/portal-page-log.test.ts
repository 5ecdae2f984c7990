import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Locator, Page } from 'playwright-core';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  createEndpoint,
  NARROW,
  noBrowser,
  OPTIONS,
  OUTPUT_DIR,
  onPage,
  openPortal,
  statusSays,
  WIDTHS,
} from '../helpers/portal-browser.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * The portal's delivery log in Chromium: each entry opens to what was sent and what came back (as text, never
 * markup), the log keeps up by itself without moving what the reader opened or focused, a secret leaves with
 * its endpoint, and every control's name holds the words it shows.
 */

/** How often the page asks for its log's newest entries (src/portal/page/deliveries-view.ts). */
const REFRESH_MS = 3000;

/** What a receiver that rejects an update answers, after a while. */
const REJECTION = '{"error":"name is too long for our shop"}';
const REJECTION_DELAY_MS = 150;
/** A body that would run if it were ever put in as markup: it sets a flag the test then looks for. */
const MARKUP = '<img src=x onerror="window.__portalRan = true">';

/** Buttons, links and disclosures shown, and whether each one's name holds its visible words (WCAG 2.5.3). */
async function namesWithoutLabel(page: Page): Promise<{ checked: string[]; wrong: string[] }> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    const checked: string[] = [];
    const wrong: string[] = [];
    const words = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();
    for (const node of nodes) {
      const role = String(node.role?.value ?? '');
      if (node.ignored || node.backendDOMNodeId === undefined) continue;
      if (!['button', 'link', 'DisclosureTriangle'].includes(role)) continue;
      const { object } = await cdp.send('DOM.resolveNode', { backendNodeId: node.backendDOMNodeId });
      const shown = await cdp.send('Runtime.callFunctionOn', {
        objectId: object.objectId ?? '',
        functionDeclaration: 'function () { return this.innerText; }',
        returnByValue: true,
      });
      const name = String(node.name?.value ?? '');
      const visible = String(shown.result.value ?? '');
      checked.push(`${role} "${name}"`);
      if (!words(name).includes(words(visible))) wrong.push(`${role} named "${name}" shows "${visible}"`);
    }
    return { checked, wrong };
  } finally {
    await cdp.detach();
  }
}

async function assertNamesHoldLabels(page: Page, view: string): Promise<void> {
  const { checked, wrong } = await namesWithoutLabel(page);
  assert.ok(checked.length > 0, `${view}: controls found: ${checked.join(', ')}`);
  assert.deepEqual(wrong, [], view);
}

/** The delivery log, its heading to its last entry, in the page's coordinates. */
const LOG_EXTENT = `[document.getElementById('deliveries-title').getBoundingClientRect().top + scrollY - 8,
  document.getElementById('deliveries').getBoundingClientRect().bottom + scrollY + 8]`;

/** The entry of an event's attempt, by the words of its outcome. */
const entryOf = (page: Page, eventId: string, outcome: RegExp): Locator =>
  page
    .locator('#deliveries > li')
    .filter({ hasText: eventId })
    .filter({ has: page.locator('.delivery-outcome', { hasText: outcome }) });

/** A pet renamed (pet.updated) and removed (pet.deleted): the ids of the two events. */
async function renameAndRemove(h: Harness): Promise<{ updated: string; deleted: string }> {
  const [pet] = await h.createPets(1);
  assert.equal((await h.call('PATCH', `/v1/pets/${pet.id}`, { body: { name: 'Rex the Magnificent' } })).status, 200);
  assert.equal((await h.call('DELETE', `/v1/pets/${pet.id}`)).status, 204);
  const feed = (await h.call('GET', '/v1/events?limit=100')).json as { id: string; type: string }[];
  const idOf = (type: string) => feed.findLast((event) => event.type === type)?.id ?? assert.fail(`no ${type}`);
  return { updated: idOf('pet.updated'), deleted: idOf('pet.deleted') };
}

eachBackend((backend) => {
  describe(`the portal's delivery log [${backend.name}]`, { skip: noBrowser, timeout: 180_000 }, () => {
    test('an entry opens to the event sent and the answer, as text; the log keeps up by itself', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t, (_n, request) => {
        if (request.body.includes('"pet.updated"'))
          return { status: 422, body: REJECTION, delayMs: REJECTION_DELAY_MS };
        if (request.body.includes('"pet.deleted"')) return { status: 200, body: MARKUP };
        return { status: 204 };
      });
      const endpoint = await createEndpoint(h, {
        url: `${receiver.url}/shop`,
        events: ['pet.updated', 'pet.deleted'],
        description: 'Shop front',
      });
      const { updated, deleted } = await renameAndRemove(h);
      // pet.updated: answered 422 twice (one retry), pet.deleted once.
      await receiver.until((got) => got.length === 3, 10_000);

      const { page, problems, requests } = await openPortal(t, h);
      await page.locator('#list > li').first().waitFor();
      await assertNamesHoldLabels(page, 'the list');
      await page.getByRole('button', { name: /^Manage/ }).click();
      const rejected = entryOf(page, updated, /^Failed \(answered 422\) at [^;]+$/);
      const retried = entryOf(page, updated, /^Failed \(answered 422\) at .+; tried again at /);
      const markup = entryOf(page, deleted, /^Succeeded \(answered 200\)/);
      // pet.deleted waited for pet.updated (same pet) while that was being tried.
      const waited = entryOf(page, deleted, /^Waited for evt_\w+ \(same pet\) from .+; sent at /);
      for (const entry of [rejected, retried, markup, waited]) await entry.waitFor({ timeout: 10_000 });
      // Marked as neither a failure nor a success: it was held back, and then sent.
      const mark = (entry: Locator) =>
        entry.evaluate((element) => (globalThis as any).getComputedStyle(element).borderLeftColor as string);
      const marks = { waited: await mark(waited), failed: await mark(rejected), succeeded: await mark(markup) };
      assert.notEqual(marks.waited, marks.failed, JSON.stringify(marks));
      assert.notEqual(marks.waited, marks.succeeded, JSON.stringify(marks));

      // What came back: the status, how long it took, the body as the receiver wrote it.
      await rejected.getByText('What was sent and what came back').click();
      const answered = (await rejected.getByText(/^Answered 422 after \d+ ms\.$/).textContent()) ?? '';
      const took = Number(/after (\d+) ms/.exec(answered)?.[1]);
      assert.ok(took >= REJECTION_DELAY_MS - 10, `${answered}: the receiver took ${REJECTION_DELAY_MS} ms`);
      // The event is looked up when the entry opens: until it is there, the answer's body is the only <pre>.
      await rejected.locator('pre.payload', { hasText: updated }).waitFor();
      const [sent, body] = await rejected.locator('pre.payload').all();
      assert.equal(await body?.textContent(), REJECTION);
      // What was sent: the event, formatted, as the key's lookup and the receiver's body have it.
      const event = (await h.call('GET', `/v1/events/${updated}`)).json;
      assert.equal(await sent?.textContent(), JSON.stringify(event, null, 2));
      const delivered = receiver.received.find((got) => got.headers['webhook-id'] === updated);
      assert.deepEqual(JSON.parse((await sent?.textContent()) ?? ''), JSON.parse(delivered?.body ?? ''));

      // The log's picture at 360 px, the rejection open, for the README and the guide (docs/portal.png).
      await page.setViewportSize(NARROW);
      await mkdir(OUTPUT_DIR, { recursive: true });
      const screenshot = path.join(OUTPUT_DIR, `portal-log-${backend.name}.png`);
      const [top = 0, bottom = 0] = (await page.evaluate(LOG_EXTENT)) as number[];
      await page.screenshot({
        path: screenshot,
        fullPage: true,
        clip: { x: 0, y: top, width: NARROW.width, height: bottom - top },
      });
      t.diagnostic(`screenshot: ${screenshot}`);

      // A body that is markup is shown as its text, and nothing of it runs.
      await markup.getByText('What was sent and what came back').click();
      await markup.locator('pre.payload', { hasText: MARKUP }).waitFor();
      assert.equal(await markup.locator('pre.payload').last().textContent(), MARKUP);
      assert.equal(await markup.getByText(MARKUP).isVisible(), true);
      assert.equal(await page.locator('#deliveries img').count(), 0, 'no element made of it');
      assert.equal(await page.evaluate('window.__portalRan === undefined'), true, 'its onerror never ran');
      await assertNamesHoldLabels(page, "the endpoint's page, entries open");

      // At 360 px, with the entries open: nothing scrolls sideways.
      const [width] = (await page.evaluate(WIDTHS)) as number[];
      assert.ok((width ?? Infinity) <= NARROW.width, `the endpoint's page is ${width} px wide`);

      // A test send shows in the log within 6 s, with no other click; what was open stays open.
      await page.getByRole('button', { name: 'Send a test event' }).click();
      const testId = /Test event (evt_\w+)/.exec(await statusSays(page, /is on its way/))?.[1] ?? '';
      const testEntry = entryOf(page, testId, /^Succeeded \(answered 204\)/);
      await testEntry.waitFor({ timeout: 6000 });
      assert.equal(await rejected.locator('details').evaluate((details) => (details as any).open), true);
      assert.equal(await page.evaluate('document.activeElement.id'), 'endpoint-test', 'focus stayed');
      await testEntry.getByText('What was sent and what came back').click();
      const testBody = JSON.parse((await testEntry.locator('pre.payload').first().textContent()) ?? '');
      assert.deepEqual(testBody, { id: testId, type: 'webhook.test', data: { webhookId: endpoint.id } });
      assert.equal(await testEntry.getByRole('button', { name: 'Send again' }).count(), 0, 'a test is not resent');

      // Focus on an entry while new ones arrive: it stays there, the entry open.
      const summary = rejected.getByText('What was sent and what came back');
      await summary.focus();
      const next = await renameAndRemove(h);
      await entryOf(page, next.deleted, /^Succeeded/).waitFor({ timeout: 6000 });
      assert.equal(
        await summary.evaluate((element) => element === (globalThis as any).document.activeElement),
        true,
        'focus stayed',
      );
      assert.equal(await rejected.locator('details').evaluate((details) => (details as any).open), true);

      // Back to the list: the log is no longer asked for, however long the page stays open.
      await page.getByRole('button', { name: '← All endpoints' }).click();
      await page.getByRole('heading', { name: 'Your webhook endpoints' }).waitFor();
      const logAsked = () => requests.filter((request) => /\/deliveries\?limit=20/.test(request.url)).length;
      const asked = logAsked();
      await sleep(2 * REFRESH_MS);
      assert.equal(logAsked(), asked);
      assert.equal(await page.locator('#deliveries > li').count(), 0, 'the log left with the view');
      assert.deepEqual(problems, []);
    });

    test('a secret shown once leaves the page with its endpoint, and with the view', async (t) => {
      const h = await startHarness(t, backend, OPTIONS);
      const receiver = await startReceiver(t);
      const { page, problems } = await openPortal(t, h);
      await page.getByLabel('URL the events are sent to').fill(`${receiver.url}/new`);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await statusSays(page, /is added/);
      assert.equal(await onPage(page, 'whsec_'), true, 'shown once, under "Add an endpoint"');
      await assertNamesHoldLabels(page, 'the list, a secret shown');

      // Opened, its secret rotated (shown there), then deleted: no secret is left anywhere in the page.
      await page.getByRole('button', { name: /^Manage/ }).click();
      await page.getByRole('button', { name: 'Rotate the signing secret' }).click();
      await page.locator('#endpoint-secret').getByText('will not be shown again').waitFor();
      await assertNamesHoldLabels(page, "the endpoint's page, a secret shown");
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await statusSays(page, /is deleted/);
      await page.getByRole('heading', { name: 'Add an endpoint' }).waitFor();
      assert.equal(await onPage(page, 'whsec_'), false, 'no whsec_ left in the page');
      assert.deepEqual(problems, []);
    });
  });
});
