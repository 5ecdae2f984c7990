import { getEvent, ServiceError } from './api.js';
import type { DeliveryAttempt, EventBody } from './api-types.js';
import { button, el, uniqueId } from './dom.js';
import { attemptOutcome, TRIGGER_WORDS } from './endpoint-summary.js';
import { report } from './notices.js';

/**
 * One entry of the delivery log: how the attempt ended, and a disclosure with what was sent (the event's
 * JSON) and what came back (status, duration, the receiver's body). Every word of the receiver's goes in as
 * text (`textContent`): a body of `<img onerror=…>` is shown, never run.
 */

/** A test send's event is no event of the feed: it cannot be resent, nor looked up (a new test can be sent). */
const TEST_EVENT_TYPE = 'webhook.test';

export interface DeliveryEntry {
  readonly attempt: DeliveryAttempt;
  readonly element: HTMLLIElement;
  /** Says again how the attempt ended, now that the log shows (or not) a later entry of its event. */
  sayOutcome(later: DeliveryAttempt | undefined): void;
}

/** The events the page has shown: an event never changes, so each is asked for once. */
const events = new Map<string, Promise<EventBody>>();

function lookUp(eventId: string): Promise<EventBody> {
  let event = events.get(eventId);
  if (event === undefined) {
    event = getEvent(eventId);
    events.set(eventId, event);
    // A refusal is shown, not kept: the next opening asks again.
    event.catch(() => events.delete(eventId));
  }
  return event;
}

const json = (value: unknown) =>
  el('pre', { className: 'payload' }, [el('code', { text: JSON.stringify(value, null, 2) })]);

interface SentPart {
  readonly nodes: (Node | string)[];
  /** Whether it is all there will be; else (the service could not be asked) the next opening asks again. */
  readonly final: boolean;
}

/**
 * What was sent: the event as the feed has it; a test send's, which is on no feed, from what the log says
 * of it (its `timestamp`, when the test was asked for, is not in the log).
 */
async function sentPart(endpointId: number, attempt: DeliveryAttempt): Promise<SentPart> {
  if (attempt.type === TEST_EVENT_TYPE) {
    const body = { id: attempt.eventId, type: attempt.type, data: { webhookId: endpointId } };
    const note = 'A test event, on no feed: its body also has "timestamp", the time the test was asked for.';
    return { nodes: [json(body), el('p', { className: 'hint', text: note })], final: true };
  }
  try {
    return { nodes: [json(await lookUp(attempt.eventId))], final: true };
  } catch (error) {
    if (error instanceof ServiceError && error.status === 404) {
      const gone = 'The event is no longer kept: events are kept for a limited time, then removed.';
      return { nodes: [el('p', { text: gone })], final: true };
    }
    report(error);
    return { nodes: [el('p', { text: 'It could not be shown: close and open this again to retry.' })], final: false };
  }
}

/** What came back: the status and duration, or why there was no answer; then the body, as text. */
function answerPart(attempt: DeliveryAttempt): (Node | string)[] {
  if (attempt.waitingFor !== undefined) return [el('p', { text: 'Nothing yet: it has not been sent.' })];
  const took = attempt.durationMs === undefined ? '' : ` after ${attempt.durationMs} ms`;
  if (attempt.responseStatus === undefined) {
    return [el('p', { text: `No answer${took}: ${attempt.error ?? 'it was not sent'}.` })];
  }
  const answer: (Node | string)[] = [el('p', { text: `Answered ${attempt.responseStatus}${took}.` })];
  if (attempt.responseBody === undefined) {
    answer.push(el('p', { text: 'The body was empty.' }));
    return answer;
  }
  answer.push(el('pre', { className: 'payload' }, [el('code', { text: attempt.responseBody })]));
  if (attempt.responseBodyTruncated === true) {
    answer.push(el('p', { className: 'hint', text: 'The first 4 KiB of a longer body: only those are kept.' }));
  }
  return answer;
}

function details(endpointId: number, attempt: DeliveryAttempt, describedBy: string): HTMLDetailsElement {
  const sent = el('div', {}, [el('p', { text: 'Loading…' })]);
  const disclosure = el('details', { className: 'delivery-details' }, [
    el('summary', { text: 'What was sent and what came back', attributes: { 'aria-describedby': describedBy } }),
    el('h4', { text: attempt.waitingFor === undefined ? 'Sent' : 'To be sent' }),
    sent,
    el('h4', { text: 'Came back' }),
    ...answerPart(attempt),
  ]);
  // Asked for when the entry is opened, not for every entry of every page.
  let shown = false;
  disclosure.addEventListener('toggle', () => {
    if (!disclosure.open || shown) return;
    void sentPart(endpointId, attempt).then(({ nodes, final }) => {
      sent.replaceChildren(...nodes);
      shown = final;
    });
  });
  return disclosure;
}

/** An entry of the log; `again` makes its "Send again" button (none for a test send). */
export function deliveryEntry(
  endpointId: number,
  attempt: DeliveryAttempt,
  again: (control: HTMLButtonElement) => void,
): DeliveryEntry {
  const eventLine = uniqueId('delivery-event');
  const outcome = el('p', { className: 'delivery-outcome' });
  // A delivery held back by its endpoint's ordering is no failure, though its entry is `pending`.
  const kind = attempt.waitingFor === undefined ? attempt.status : 'waiting';
  const element = el('li', { className: `card delivery delivery-${kind}` }, [
    outcome,
    el('p', { attributes: { id: eventLine } }, [
      `Attempt ${attempt.attempt}, ${TRIGGER_WORDS[attempt.trigger]}: ${attempt.type}, `,
      el('code', { text: attempt.eventId }),
    ]),
  ]);
  if (attempt.type !== TEST_EVENT_TYPE) {
    // The visible words are its name, so speech control finds it; which event, it is told by the line above.
    const control = button('Send again');
    control.setAttribute('aria-describedby', eventLine);
    again(control);
    element.append(control);
  }
  element.append(details(endpointId, attempt, eventLine));
  return {
    attempt,
    element,
    sayOutcome: (later) => outcome.replaceChildren(...attemptOutcome(attempt, later)),
  };
}
