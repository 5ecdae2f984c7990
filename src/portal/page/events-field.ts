import { el, uniqueId } from './dom.js';
import { EVENT_TYPES } from './event-types.js';

/** Fills a fieldset with one labelled checkbox per event type. */
export function addEventCheckboxes(fieldset: HTMLFieldSetElement): void {
  for (const type of EVENT_TYPES) {
    const id = uniqueId('event');
    const box = el('input', { attributes: { id, type: 'checkbox', value: type } });
    fieldset.append(el('div', { className: 'check' }, [box, el('label', { text: type, attributes: { for: id } })]));
  }
}

function checkboxes(fieldset: HTMLFieldSetElement): HTMLInputElement[] {
  return [...fieldset.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')];
}

export function checkedEvents(fieldset: HTMLFieldSetElement): string[] {
  return checkboxes(fieldset)
    .filter((box) => box.checked)
    .map((box) => box.value);
}

export function checkEvents(fieldset: HTMLFieldSetElement, events: readonly string[]): void {
  for (const box of checkboxes(fieldset)) box.checked = events.includes(box.value);
}
