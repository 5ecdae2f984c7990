import { createEndpoint, getEndpoint, listDeliveries, listEndpoints } from './api.js';
import type { Endpoint } from './api-types.js';
import { addChoices, chosen } from './choice-field.js';
import { button, byId, el, focusChild } from './dom.js';
import { attemptOutcome, endpointOrdering, endpointRateLimit, endpointState } from './endpoint-summary.js';
import { openEndpoint } from './endpoint-view.js';
import { DEFAULT_EVENTS } from './event-types.js';
import { addEventCheckboxes, checkEvents, checkedEvents } from './events-field.js';
import { act, announce, report } from './notices.js';
import { ORDERINGS } from './ordering-field.js';
import { chosenRateLimit } from './rate-limit-field.js';
import { showSecret } from './secret-panel.js';
import { SIGNATURES } from './signature-field.js';

/** The owner's endpoints, a page at a time, each with its last attempt; and the form that adds one. */

const PAGE_SIZE = 20;

const listSection = byId('list-section', HTMLElement);
const listTitle = byId('list-title', HTMLHeadingElement);
const list = byId('list', HTMLUListElement);
const empty = byId('list-empty', HTMLParagraphElement);
const more = byId('list-more', HTMLButtonElement);
const createSection = byId('create-section', HTMLElement);
const changesSection = byId('changes-section', HTMLElement);
const createSecret = byId('create-secret', HTMLDivElement);
const createForm = byId('create-form', HTMLFormElement);
const createUrl = byId('create-url', HTMLInputElement);
const createDescription = byId('create-description', HTMLInputElement);
const createEvents = byId('create-events', HTMLFieldSetElement);
const createOrdering = byId('create-ordering', HTMLSelectElement);
const createOrderingHint = byId('create-ordering-hint', HTMLParagraphElement);
const createRateLimit = byId('create-rate-limit', HTMLInputElement);
const createSignature = byId('create-signature', HTMLSelectElement);
const createSignatureHint = byId('create-signature-hint', HTMLParagraphElement);
const createAdd = byId('create-add', HTMLButtonElement);

addEventCheckboxes(createEvents);
checkEvents(createEvents, DEFAULT_EVENTS);
addChoices(createOrdering, createOrderingHint, ORDERINGS);
addChoices(createSignature, createSignatureHint, SIGNATURES);

let next: string | undefined;

/** The outcome of the endpoint's latest attempt, filled in once its log answers. */
function lastAttempt(endpoint: Endpoint): HTMLParagraphElement {
  const line = el('p', { className: 'last-attempt', text: 'Last attempt: …' });
  listDeliveries(endpoint.id, {}, 1).then(
    ({ items: [attempt] }) =>
      line.replaceChildren('Last attempt: ', ...(attempt === undefined ? ['none yet'] : attemptOutcome(attempt))),
    report,
  );
  return line;
}

function card(endpoint: Endpoint): HTMLLIElement {
  const manage = button('Manage', `Manage the endpoint ${endpoint.url}`);
  manage.addEventListener('click', () => void act(manage, async () => showEndpoint(await getEndpoint(endpoint.id))));
  return el('li', { className: 'card' }, [
    el('h3', { className: 'url', text: endpoint.url }),
    ...(endpoint.description === null ? [] : [el('p', { className: 'description', text: endpoint.description })]),
    el('p', { className: 'state' }, endpointState(endpoint)),
    el('p', { className: 'events', text: `Events: ${endpoint.events.join(', ')}` }),
    el('p', { className: 'ordering', text: endpointOrdering(endpoint) }),
    el('p', { className: 'rate-limit', text: endpointRateLimit(endpoint) }),
    lastAttempt(endpoint),
    manage,
  ]);
}

async function loadPage(): Promise<void> {
  const page = await listEndpoints(PAGE_SIZE, next);
  list.append(...page.items.map(card));
  next = page.next;
  more.hidden = next === undefined;
  empty.hidden = list.childElementCount > 0;
}

/** Shows the list from its first page (again, after a change). */
export async function showEndpoints(): Promise<void> {
  next = undefined;
  list.replaceChildren();
  await loadPage();
}

/** An endpoint's page in place of the list, the form and the changes; they come back when the reader leaves it. */
async function showEndpoint(endpoint: Endpoint): Promise<void> {
  // A secret shown once leaves the page with the view: its endpoint may be deleted there.
  createSecret.replaceChildren();
  listSection.hidden = true;
  createSection.hidden = true;
  changesSection.hidden = true;
  await openEndpoint(endpoint, {
    changed: () => void showEndpoints().catch(report),
    closed: () => {
      listSection.hidden = false;
      createSection.hidden = false;
      changesSection.hidden = false;
      listTitle.focus();
    },
  });
}

more.addEventListener('click', () =>
  act(more, async () => {
    const shown = list.childElementCount;
    await loadPage();
    focusChild(list, shown);
  }),
);

createForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void act(createAdd, async () => {
    const description = createDescription.value.trim();
    const rateLimit = chosenRateLimit(createRateLimit);
    const created = await createEndpoint({
      url: createUrl.value.trim(),
      events: checkedEvents(createEvents),
      ordering: chosen(createOrdering, ORDERINGS),
      signature: chosen(createSignature, SIGNATURES),
      ...(description === '' ? {} : { description }),
      ...(rateLimit === null ? {} : { rateLimit }),
    });
    createForm.reset();
    checkEvents(createEvents, DEFAULT_EVENTS);
    // An HMAC endpoint's answer has its secret, that once; an Ed25519 one's public key is on its page.
    if (created.secret !== undefined) {
      showSecret(createSecret, {
        heading: `Signing secret of ${created.url}`,
        secret: created.secret,
        returnFocusTo: createUrl,
      });
      announce(`The endpoint ${created.url} is added.`);
    } else {
      announce(`The endpoint ${created.url} is added; Manage it to see the public key that verifies its deliveries.`);
    }
    await showEndpoints();
  });
});
