import { listDeliveries, resend, ServiceError } from './api.js';
import type { DeliveryAttempt, DeliveryFilter, DeliveryStatus, Page } from './api-types.js';
import { type DeliveryEntry, deliveryEntry } from './delivery-entry.js';
import { byId, focusChild } from './dom.js';
import { act, announce, report } from './notices.js';

/**
 * One endpoint's delivery log: newest first, filtered by outcome or event, a page at a time. While it is
 * shown it keeps up by itself: every few seconds, and soon after an action, its newest page is asked for
 * again and the entries not yet shown are put in place, so an entry the reader opened, and focus, stay.
 */

const PAGE_SIZE = 20;
/** Between two looks at the newest page while the log is shown. */
const REFRESH_MS = 3000;
/** After an action that sends something: its first attempt usually ends within this. */
const SOON_MS = 500;

const list = byId('deliveries', HTMLOListElement);
const empty = byId('deliveries-empty', HTMLParagraphElement);
const more = byId('deliveries-more', HTMLButtonElement);
const form = byId('deliveries-filter', HTMLFormElement);
const statusSelect = byId('deliveries-status', HTMLSelectElement);
const eventInput = byId('deliveries-event', HTMLInputElement);
const show = byId('deliveries-show', HTMLButtonElement);

/** What the log shows: whose, with which filter, and where the next page starts. A new one for each showing. */
interface Shown {
  readonly endpointId: number;
  readonly filter: DeliveryFilter;
  next: string | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}
let shown: Shown | undefined;

/** The entry of each item of the list. */
const entries = new WeakMap<Element, DeliveryEntry>();

/** An entry's identity across refreshes: an attempt, once logged, never changes. */
const keyOf = (attempt: DeliveryAttempt) =>
  [attempt.eventId, attempt.attempt, attempt.trigger, attempt.attemptedAt, attempt.waitingFor ?? ''].join(' ');

function shownEntries(): DeliveryEntry[] {
  return [...list.children].flatMap((item) => entries.get(item) ?? []);
}

/**
 * Words that depend on the entries around: an attempt followed by a later one of its event (further up:
 * newest first) says so rather than promising a next try.
 */
function sayOutcomes(): void {
  // Newest first: each entry's later one is the last seen of its event, before it takes that place.
  const later = new Map<string, DeliveryAttempt>();
  for (const entry of shownEntries()) {
    entry.sayOutcome(later.get(entry.attempt.eventId));
    if (entry.attempt.waitingFor === undefined) later.set(entry.attempt.eventId, entry.attempt);
  }
  empty.hidden = list.childElementCount > 0;
}

function entry(endpointId: number, attempt: DeliveryAttempt): HTMLLIElement {
  const made = deliveryEntry(endpointId, attempt, (again) =>
    again.addEventListener('click', () =>
      act(again, async () => {
        const accepted = await resend(endpointId, attempt.eventId);
        announce(
          accepted.endpointEnabled
            ? `Event ${accepted.eventId} will be sent again; its attempts will show in the log.`
            : `Event ${accepted.eventId} will be sent again once the endpoint is enabled.`,
        );
        refreshSoon();
      }),
    ),
  );
  entries.set(made.element, made);
  return made.element;
}

async function loadPage(): Promise<void> {
  const asked = shown;
  if (asked === undefined) return;
  const page = await listDeliveries(asked.endpointId, asked.filter, PAGE_SIZE, asked.next);
  if (shown !== asked) return;
  list.append(...page.items.map((attempt) => entry(asked.endpointId, attempt)));
  asked.next = page.next;
  more.hidden = page.next === undefined;
  sayOutcomes();
}

/**
 * Puts the newest page's entries that are not shown yet in their place, each after the one before it in the
 * page; what is shown stays as it is. When none of the page is shown (more than a page came meanwhile, or the
 * log was empty), the page replaces the list.
 */
function merge(asked: Shown, { items, next }: Page<DeliveryAttempt>): void {
  const byKey = new Map(shownEntries().map((shownEntry) => [keyOf(shownEntry.attempt), shownEntry.element]));
  if (!items.some((attempt) => byKey.has(keyOf(attempt)))) {
    if (items.length === 0) return;
    list.replaceChildren(...items.map((attempt) => entry(asked.endpointId, attempt)));
    asked.next = next;
    more.hidden = next === undefined;
  } else {
    let previous: HTMLLIElement | undefined;
    for (const attempt of items) {
      let item = byKey.get(keyOf(attempt));
      if (item === undefined) {
        item = entry(asked.endpointId, attempt);
        if (previous === undefined) list.prepend(item);
        else previous.after(item);
      }
      previous = item;
    }
  }
  sayOutcomes();
}

function schedule(asked: Shown, ms: number): void {
  clearTimeout(asked.timer);
  asked.timer = setTimeout(() => void refresh(asked), ms);
}

async function refresh(asked: Shown): Promise<void> {
  // A tab in the background is not looked at: the next look once it is shown again comes within REFRESH_MS.
  if (document.visibilityState === 'visible') {
    try {
      const page = await listDeliveries(asked.endpointId, asked.filter, PAGE_SIZE);
      if (shown !== asked) return;
      merge(asked, page);
    } catch (error) {
      if (shown !== asked) return;
      // The connection may come back; anything else (the session ended, the endpoint deleted) stops the log.
      if (!(error instanceof ServiceError && error.code === 'unreachable')) {
        halt();
        report(error);
        return;
      }
    }
  }
  if (shown === asked) schedule(asked, REFRESH_MS);
}

/** Looks at the newest entries soon: an action just sent something. */
export function refreshSoon(): void {
  if (shown !== undefined) schedule(shown, SOON_MS);
}

/** Stops keeping the log up, and answers that come late are dropped. */
function halt(): void {
  if (shown !== undefined) clearTimeout(shown.timer);
  shown = undefined;
}

/** Stops keeping the log up and empties it: the reader left the endpoint. */
export function stopDeliveries(): void {
  halt();
  list.replaceChildren();
}

async function showFirstPage(endpointId: number, filter: DeliveryFilter): Promise<void> {
  stopDeliveries();
  const asked: Shown = { endpointId, filter, next: undefined, timer: undefined };
  shown = asked;
  await loadPage();
  if (shown === asked) schedule(asked, REFRESH_MS);
}

/** Shows the newest attempts of an endpoint, without filter, and keeps them up until stopDeliveries. */
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
    const count = list.childElementCount;
    await loadPage();
    focusChild(list, count);
  }),
);
