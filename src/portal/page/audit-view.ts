import { listAuditLog } from './api.js';
import type { AuditEntry } from './api-types.js';
import { byId, el, focusChild, timeElement } from './dom.js';
import { act } from './notices.js';

/** The owner's audit log: who changed its endpoints and links, and how; newest first, a page at a time. */

const PAGE_SIZE = 20;

const list = byId('changes', HTMLOListElement);
const empty = byId('changes-empty', HTMLParagraphElement);
const more = byId('changes-more', HTMLButtonElement);
const refresh = byId('changes-refresh', HTMLButtonElement);

let next: string | undefined;

/** Who made it, in words: the key by its name, this owner's portal, the operator, the service. */
function actor(entry: AuditEntry): string {
  switch (entry.actor.kind) {
    case 'key':
      return `API key "${entry.actor.keyName}"`;
    case 'portal':
      return 'the portal';
    case 'cli':
      return 'the operator';
    case 'service':
      return 'the service';
  }
}

/** A changed value as text: JSON, but a string as it is. */
const value = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function entry(change: AuditEntry): HTMLLIElement {
  const item = el('li', { className: 'card change' }, [
    el('p', {}, [timeElement(change.at), ` ${actor(change)}: `, el('code', { text: change.action })]),
    el('p', {}, [`${change.target.kind.replaceAll('_', ' ')} `, el('code', { text: change.target.id })]),
  ]);
  const fields = Object.entries(change.changes ?? {});
  if (fields.length > 0) {
    const rows = fields.map(([field, { before, after }]) =>
      el('li', {}, [el('code', { text: field }), `: ${value(before)} → ${value(after)}`]),
    );
    item.append(el('ul', { className: 'change-fields' }, rows));
  }
  return item;
}

async function loadPage(): Promise<void> {
  const page = await listAuditLog(PAGE_SIZE, next);
  list.append(...page.items.map(entry));
  next = page.next;
  more.hidden = next === undefined;
  empty.hidden = list.childElementCount > 0;
}

/** Shows the newest changes, from the first page again. */
export async function showAuditLog(): Promise<void> {
  next = undefined;
  list.replaceChildren();
  await loadPage();
}

refresh.addEventListener('click', () => act(refresh, showAuditLog));

more.addEventListener('click', () =>
  act(more, async () => {
    const shown = list.childElementCount;
    await loadPage();
    focusChild(list, shown);
  }),
);
