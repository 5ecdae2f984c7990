import { button, el, uniqueId } from './dom.js';

interface SecretShown {
  readonly heading: string;
  readonly secret: string;
  /** More to say, such as until when the secret it replaces still signs. */
  readonly notes?: readonly (readonly (Node | string)[])[];
  /** Where focus goes once the panel is closed. */
  readonly returnFocusTo: HTMLElement;
}

/**
 * A signing secret, shown the one time the service sends it (on create and rotate): in a read-only field
 * that can be selected, with a copy button, until the reader says it is saved. Then it leaves the page.
 */
export function showSecret(container: HTMLElement, { heading, secret, notes = [], returnFocusTo }: SecretShown): void {
  const fieldId = uniqueId('secret');
  const headingId = uniqueId('secret-heading');
  const field = el('input', {
    className: 'secret-value',
    attributes: { id: fieldId, type: 'text', readonly: '', spellcheck: 'false', autocomplete: 'off' },
  });
  field.value = secret;
  const outcome = el('p', { attributes: { role: 'status' } });
  const copy = button('Copy secret');
  copy.addEventListener('click', async () => {
    try {
      // Only in a secure context (HTTPS, or this machine); elsewhere the field is selected for the reader.
      await navigator.clipboard.writeText(secret);
      outcome.textContent = 'Copied.';
    } catch {
      field.focus();
      field.select();
      outcome.textContent = 'It could not be copied here: it is selected, copy it with Ctrl+C (⌘C on a Mac).';
    }
  });
  const done = button('I have saved it');
  done.addEventListener('click', () => {
    container.replaceChildren();
    returnFocusTo.focus();
  });
  container.replaceChildren(
    el('div', { className: 'secret', attributes: { role: 'group', 'aria-labelledby': headingId } }, [
      el('h3', { text: heading, attributes: { id: headingId } }),
      el('p', { text: 'It will not be shown again: copy it now and keep it where your receiver checks signatures.' }),
      el('label', { text: 'Signing secret', attributes: { for: fieldId } }),
      field,
      ...notes.map((note) => el('p', {}, note)),
      el('div', { className: 'actions' }, [copy, done]),
      outcome,
    ]),
  );
  copy.focus();
}
