import { changeEndpoint, deleteEndpoint, getEndpoint, recover, rotateSecret, testSend } from './api.js';
import type { Endpoint, EndpointChange } from './api-types.js';
import { addChoices, chosen } from './choice-field.js';
import { confirmAction } from './confirm-dialog.js';
import { refreshSoon, showDeliveries, stopDeliveries } from './deliveries-view.js';
import { byId, timeElement } from './dom.js';
import { endpointOrdering, endpointRateLimit, endpointState } from './endpoint-summary.js';
import { addEventCheckboxes, checkEvents, checkedEvents } from './events-field.js';
import { act, announce } from './notices.js';
import { ORDERINGS } from './ordering-field.js';
import { chosenRateLimit } from './rate-limit-field.js';
import { showSecret } from './secret-panel.js';
import { SIGNATURES } from './signature-field.js';
import { signatureLines } from './signature-keys.js';

/** One endpoint: its state, its actions (enable, test, rotate, delete), its change form, recovery and log. */

const section = byId('endpoint', HTMLElement);
const title = byId('endpoint-title', HTMLHeadingElement);
const state = byId('endpoint-state', HTMLParagraphElement);
const ordering = byId('endpoint-ordering', HTMLParagraphElement);
const signature = byId('endpoint-signature', HTMLDivElement);
const rateLimit = byId('endpoint-rate-limit', HTMLParagraphElement);
const secretPanel = byId('endpoint-secret', HTMLDivElement);
const back = byId('endpoint-back', HTMLButtonElement);
const toggle = byId('endpoint-toggle', HTMLButtonElement);
const test = byId('endpoint-test', HTMLButtonElement);
const rotate = byId('endpoint-rotate', HTMLButtonElement);
const remove = byId('endpoint-delete', HTMLButtonElement);
const editForm = byId('edit-form', HTMLFormElement);
const editUrl = byId('edit-url', HTMLInputElement);
const editDescription = byId('edit-description', HTMLInputElement);
const editEvents = byId('edit-events', HTMLFieldSetElement);
const editOrdering = byId('edit-ordering', HTMLSelectElement);
const editOrderingHint = byId('edit-ordering-hint', HTMLParagraphElement);
const editRateLimit = byId('edit-rate-limit', HTMLInputElement);
const editSignature = byId('edit-signature', HTMLSelectElement);
const editSignatureHint = byId('edit-signature-hint', HTMLParagraphElement);
const save = byId('edit-save', HTMLButtonElement);
const recoverForm = byId('recover-form', HTMLFormElement);
const recoverSince = byId('recover-since', HTMLInputElement);
const recoverSend = byId('recover-send', HTMLButtonElement);

addEventCheckboxes(editEvents);
addChoices(editOrdering, editOrderingHint, ORDERINGS);
addChoices(editSignature, editSignatureHint, SIGNATURES);

interface Listener {
  /** The endpoint was changed or deleted: the list is out of date. */
  changed(): void;
  /** The reader left the endpoint (back, or it was deleted). */
  closed(): void;
}

let current: Endpoint | undefined;
let listener: Listener | undefined;

function render(endpoint: Endpoint): void {
  current = endpoint;
  title.textContent = endpoint.url;
  state.replaceChildren(...endpointState(endpoint));
  ordering.textContent = endpointOrdering(endpoint);
  signature.replaceChildren(...signatureLines(endpoint));
  rateLimit.textContent = endpointRateLimit(endpoint);
  toggle.textContent = endpoint.enabled ? 'Disable endpoint' : 'Enable endpoint';
  editUrl.value = endpoint.url;
  editDescription.value = endpoint.description ?? '';
  checkEvents(editEvents, endpoint.events);
  editOrdering.value = endpoint.ordering;
  editRateLimit.value = endpoint.rateLimit === null ? '' : String(endpoint.rateLimit);
  editSignature.value = endpoint.signature;
}

/** The fields of the form that differ from the endpoint: only those are sent. */
function changes(endpoint: Endpoint): EndpointChange {
  const url = editUrl.value.trim();
  const description = editDescription.value.trim();
  const events = checkedEvents(editEvents);
  const order = chosen(editOrdering, ORDERINGS);
  const limit = chosenRateLimit(editRateLimit);
  const signed = chosen(editSignature, SIGNATURES);
  const sameEvents = events.length === endpoint.events.length && events.every((type) => endpoint.events.includes(type));
  return {
    ...(url === endpoint.url ? {} : { url }),
    ...(description === (endpoint.description ?? '') ? {} : { description: description === '' ? null : description }),
    ...(sameEvents ? {} : { events }),
    ...(order === endpoint.ordering ? {} : { ordering: order }),
    ...(limit === endpoint.rateLimit ? {} : { rateLimit: limit }),
    ...(signed === endpoint.signature ? {} : { signature: signed }),
  };
}

/** Until when the key or secret replaced still signs beside the new one, as a panel's note says it. */
const alsoSigns = (replaced: string, until: string | null): (Node | string)[] =>
  until === null
    ? [`${replaced} no longer signs deliveries.`]
    : [`${replaced} also signs every delivery until `, timeElement(until), '; then only this one does.'];

/** Runs an action on the endpoint shown, if one is. */
function onCurrent(control: HTMLButtonElement, action: (endpoint: Endpoint) => Promise<void>): void {
  const endpoint = current;
  if (endpoint !== undefined) void act(control, () => action(endpoint));
}

function close(): void {
  current = undefined;
  stopDeliveries();
  secretPanel.replaceChildren();
  section.hidden = true;
  listener?.closed();
}

/** Shows an endpoint in place of the list, focus on its heading. */
export async function openEndpoint(endpoint: Endpoint, onEvents: Listener): Promise<void> {
  listener = onEvents;
  secretPanel.replaceChildren();
  recoverForm.reset();
  render(endpoint);
  section.hidden = false;
  title.focus();
  await showDeliveries(endpoint.id);
}

back.addEventListener('click', close);

toggle.addEventListener('click', () =>
  onCurrent(toggle, async (endpoint) => {
    render(await changeEndpoint(endpoint.id, { enabled: !endpoint.enabled }));
    listener?.changed();
    announce(
      endpoint.enabled
        ? 'Disabled: nothing is sent to it until it is enabled again; the deliveries meanwhile wait.'
        : 'Enabled: the deliveries that waited are sent now.',
    );
    refreshSoon();
  }),
);

test.addEventListener('click', () =>
  onCurrent(test, async (endpoint) => {
    const accepted = await testSend(endpoint.id);
    announce(
      accepted.endpointEnabled
        ? `Test event ${accepted.eventId} is on its way; it will show in the delivery log.`
        : `Test event ${accepted.eventId} will be sent once the endpoint is enabled.`,
    );
    refreshSoon();
  }),
);

rotate.addEventListener('click', () =>
  onCurrent(rotate, async (endpoint) => {
    const rotated = await rotateSecret(endpoint.id);
    const until = rotated.previousSecretExpiresAt;
    render(await getEndpoint(endpoint.id));
    // An Ed25519 endpoint has no secret to show: its new public key is on the page, with the previous one.
    if (rotated.secret === undefined) {
      announce('New key pair: its public key is shown; the previous key also signs while it is shown.');
      return;
    }
    showSecret(secretPanel, {
      heading: 'New signing secret',
      secret: rotated.secret,
      notes: [alsoSigns('The previous secret', until)],
      returnFocusTo: rotate,
    });
  }),
);

remove.addEventListener('click', () =>
  onCurrent(remove, async (endpoint) => {
    const sure = await confirmAction(
      `Delete the endpoint ${endpoint.url}? Nothing more is sent to it, and its delivery log goes with it.`,
      'Delete',
    );
    if (!sure) return;
    await deleteEndpoint(endpoint.id);
    close();
    listener?.changed();
    announce(`The endpoint ${endpoint.url} is deleted.`);
  }),
);

editForm.addEventListener('submit', (event) => {
  event.preventDefault();
  onCurrent(save, async (endpoint) => {
    const change = changes(endpoint);
    if (Object.keys(change).length === 0) {
      announce('Nothing to save: the form is as the endpoint is.');
      return;
    }
    // Back to HMAC, the answer has the new secret, that once: shown like a rotation's, and kept nowhere else.
    const { secret, ...changed } = await changeEndpoint(endpoint.id, change);
    render(changed);
    listener?.changed();
    if (secret !== undefined) {
      showSecret(secretPanel, {
        heading: 'New signing secret',
        secret,
        notes: [alsoSigns('The Ed25519 key', changed.previousSecretExpiresAt)],
        returnFocusTo: save,
      });
    } else if (change.signature === 'ed25519') {
      // A secret still shown from before no longer says how the endpoint signs.
      secretPanel.replaceChildren();
      announce('Saved: its deliveries are signed with Ed25519, verified with the public key shown.');
    } else {
      announce('Saved.');
    }
  });
});

recoverForm.addEventListener('submit', (event) => {
  event.preventDefault();
  onCurrent(recoverSend, async (endpoint) => {
    // datetime-local is the reader's local time, without zone; Date reads it so, and the service wants UTC.
    const accepted = await recover(endpoint.id, new Date(recoverSince.value).toISOString());
    const what = accepted.queued === 1 ? '1 failed delivery' : `${accepted.queued} failed deliveries`;
    announce(
      accepted.endpointEnabled
        ? `${what} will be sent again, oldest first.`
        : `${what} will be sent again once the endpoint is enabled.`,
    );
    refreshSoon();
  });
});
