import { ServiceError } from './api.js';
import { byId } from './dom.js';

/**
 * What the page tells the reader: the outcome of an action (a status region, read out politely), a refusal
 * (an alert region, with the service's own message), or that the session is over and a new link is needed.
 */

const alertRegion = byId('alert', HTMLDivElement);
const statusRegion = byId('status', HTMLDivElement);

/** Before an action: what the last one said no longer applies. */
function clearNotices(): void {
  alertRegion.textContent = '';
  statusRegion.textContent = '';
}

export function announce(text: string): void {
  alertRegion.textContent = '';
  statusRegion.textContent = text;
}

/** Shows the "ask for a new link" page in place of the portal, with the service's reason. */
function showSessionEnded(reason: string): void {
  clearNotices();
  byId('opening', HTMLParagraphElement).hidden = true;
  byId('portal', HTMLDivElement).hidden = true;
  byId('who', HTMLParagraphElement).hidden = true;
  byId('ended-reason', HTMLParagraphElement).textContent = `The service said: ${reason}`;
  byId('ended', HTMLElement).hidden = false;
  byId('ended-title', HTMLHeadingElement).focus();
}

/** Shows why an action failed: the session's end (401 from any call) or the service's refusal. */
export function report(error: unknown): void {
  if (error instanceof ServiceError && error.sessionEnded) {
    showSessionEnded(error.message);
    return;
  }
  statusRegion.textContent = '';
  alertRegion.textContent = error instanceof ServiceError ? error.message : `Something went wrong: ${String(error)}`;
}

/**
 * Runs an action started by `control`: clears the notices, refuses the control meanwhile (no double submit;
 * aria-disabled rather than disabled, which would take the keyboard's focus away), and reports a failure.
 */
export async function act(control: HTMLButtonElement, action: () => Promise<void>): Promise<void> {
  if (control.getAttribute('aria-disabled') === 'true') return;
  clearNotices();
  control.setAttribute('aria-disabled', 'true');
  try {
    await action();
  } catch (error) {
    report(error);
  } finally {
    control.removeAttribute('aria-disabled');
  }
}
