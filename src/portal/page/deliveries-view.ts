import { listDeliveries, resend } from './api.js';
import type { DeliveryAttempt, DeliveryFilter, DeliveryStatus } from './api-types.js';
import { button, byId, el, focusChild, timeElement } from './dom.js';
import { attemptOutcome, TRIGGER_WORDS } from './endpoint-summary.js';
import { act, announce } from './notices.js';

/** One endpoint's delivery log: newest first, filtered by outcome or event, a page at a time. */

const PAGE_SIZE = 20;
/** A test send's event is no event of the feed: it cannot be resent (a new test can be sent). */
const TEST_EVENT_TYPE = 'webhook.test';

const list = byId('deliveries', HTMLOListElement);
const empty = byId('deliveries-empty', HTMLParagraphElement);
const more = byId('deliveries-more', HTMLButtonElement);
const form = byId('deliveries-filter', HTMLFormElement);
const statusSelect = byId('deliveries-status', HTMLSelectElement);
const eventInput = byId('deliveries-event', HTMLInputElement);
const show = byId('deliveries-show', HTMLButtonElement);

/** What the log shows: whose, with which filter, and where the next page starts. */
let shown: { endpointId: number; filter: DeliveryFilter; next: string | undefined } | undefined;

function entry(endpointId: number, attempt: DeliveryAttempt): HTMLLIElement {
  const item = el('li', { className: `card delivery delivery-${attempt.status}` }, [
    el('p', { className: 'delivery-outcome' }, attemptOutcome(attempt)),
    el('p', {}, [
      `Attempt ${attempt.attempt}, ${TRIGGER_WORDS[attempt.trigger]}: ${attempt.type}, `,
      el('code', { text: attempt.eventId }),
    ]),
  ]);
  if (attempt.nextAttemptAt !== undefined) {
    item.append(el('p', {}, ['Next try at ', timeElement(attempt.nextAttemptAt)]));
  }
  if (attempt.type !== TEST_EVENT_TYPE) {
    const again = button('Send again', `Send event ${attempt.eventId} again`);
    again.addEventListener('click', () =>
      act(again, async () => {
        const accepted = await resend(endpointId, attempt.eventId);
        announce(
          accepted.endpointEnabled
            ? `Event ${accepted.eventId} will be sent again; its attempts will show in the log.`
            : `Event ${accepted.eventId} will be sent again once the endpoint is enabled.`,
        );
      }),
    );
    item.append(again);
  }
  return item;
}

async function loadPage(): Promise<void> {
  if (shown === undefined) return;
  const { endpointId, filter } = shown;
  const page = await listDeliveries(endpointId, filter, PAGE_SIZE, shown.next);
  list.append(...page.items.map((attempt) => entry(endpointId, attempt)));
  shown.next = page.next;
  more.hidden = page.next === undefined;
  empty.hidden = list.childElementCount > 0;
}

async function showFirstPage(endpointId: number, filter: DeliveryFilter): Promise<void> {
  shown = { endpointId, filter, next: undefined };
  list.replaceChildren();
  await loadPage();
}

/** Shows the newest attempts of an endpoint, without filter. */
export async function showDeliveries(endpointId: number): Promise<void> {
  form.reset();
  await showFirstPage(endpointId, {});
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  if (shown === undefined) return;
  const endpointId = shown.endpointId;
  const status = statusSelect.value as DeliveryStatus | '';
  const eventId = eventInput.value.trim();
  const filter: DeliveryFilter = {
    ...(status === '' ? {} : { status }),
    ...(eventId === '' ? {} : { eventId }),
  };
  void act(show, () => showFirstPage(endpointId, filter));
});

more.addEventListener('click', () =>
  act(more, async () => {
    const shown = list.childElementCount;
    await loadPage();
    focusChild(list, shown);
  }),
);
