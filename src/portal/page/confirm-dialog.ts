import { byId } from './dom.js';

const dialog = byId('confirm', HTMLDialogElement);
const question = byId('confirm-text', HTMLParagraphElement);
const yes = byId('confirm-yes', HTMLButtonElement);
const no = byId('confirm-no', HTMLButtonElement);
const CONFIRMED = 'yes';

yes.addEventListener('click', () => dialog.close(CONFIRMED));
no.addEventListener('click', () => dialog.close());

/**
 * Asks before an action that cannot be undone, in a modal dialog: focus starts on Cancel, Escape cancels,
 * Tab moves between the two buttons, and focus returns where it was.
 */
export function confirmAction(text: string, confirmLabel: string): Promise<boolean> {
  question.textContent = text;
  yes.textContent = confirmLabel;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === CONFIRMED), { once: true });
    dialog.showModal();
    no.focus();
  });
}
