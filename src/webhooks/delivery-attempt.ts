import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterMs } from '../domain/retry-after.js';
import { eventId, toSentEvent } from '../representations/resources.js';
import type { AttemptOutcome, AttemptRecorded, DueDelivery } from '../store/records.js';
import { AttemptSpan } from './attempt-span.js';
import type { DispatcherOptions } from './dispatcher-options.js';
import type { SecretsRead } from './secrets-read.js';
import { type SendResult, sendWebhook } from './send-webhook.js';
import { signingSecrets, webhookHeaders } from './signature.js';

/** The first wait before recording an attempt again while the database is away; it doubles up to the max. */
const RECORD_RETRY_MS = { first: 100, max: 5000 };

export interface AttemptContext extends DispatcherOptions {
  /** Aborts the request (recorded as `stopped`) and ends retries of its record (the dispatcher's stop gave up waiting). */
  readonly signal: AbortSignal;
  /** The endpoint's keep-alive agent for a URL. */
  readonly agent: (url: URL) => http.Agent;
  /** The endpoints' signing secrets as of now. */
  readonly secrets: SecretsRead;
  /** When the attempt counts as started, when a rate limit logged it so (else when it begins). */
  readonly startedAt?: Date | undefined;
  /** Told when the request is written (ms, epoch): a rate limit's gate counts its start from then. */
  readonly sent?: ((at: number) => void) | undefined;
}

/**
 * One attempt of a claimed delivery: signs and sends it, frees the endpoint's slot (`release`, told whether
 * it was delivered) once the request is over, records the outcome, then logs and counts it. An attempt the
 * stop cut off is recorded too, as such, and due again at once: its lease no longer holds it.
 */
export async function runAttempt(
  delivery: DueDelivery,
  release: (delivered: boolean) => void,
  context: AttemptContext,
): Promise<void> {
  const id = eventId(delivery.event.seq);
  if (context.tracer === undefined) return attempt(delivery, id, release, context, undefined);
  const span = new AttemptSpan(context.tracer, delivery, id);
  try {
    await span.within(() => attempt(delivery, id, release, context, span));
  } finally {
    span.end();
  }
}

async function attempt(
  delivery: DueDelivery,
  id: string,
  release: (delivered: boolean) => void,
  context: AttemptContext,
  span: AttemptSpan | undefined,
): Promise<void> {
  const { timeoutMs, policy, log, metrics, signal, agent } = context;
  const attemptedAt = context.startedAt ?? new Date();
  const body = JSON.stringify(toSentEvent(delivery.event));
  // Signed as it is sent, with the secrets of then (the claim's, should they not be read: it may be gone).
  const headers = async () => {
    const sentAt = new Date();
    const now = await context.secrets.read(delivery.endpoint.id).catch(() => undefined);
    const signed = webhookHeaders(signingSecrets(now ?? delivery.endpoint, sentAt), id, sentAt, body);
    // Written just after this returns.
    context.sent?.(Date.now());
    return span === undefined ? signed : { ...signed, ...span.headers() };
  };
  const result = await sendWebhook({ url: delivery.endpoint.url, headers, body }, { policy, timeoutMs, signal, agent });
  span?.sent(result);
  release(result.delivered);
  const outcome = outcomeOf(delivery, result, attemptedAt, context);
  const recorded = await record(outcome, context);
  log.info(
    {
      endpointId: delivery.endpoint.id,
      eventId: id,
      attempt: delivery.attempt,
      status: outcome.status,
      responseStatus: result.responseStatus,
      error: result.error,
      retryAfter: result.retryAfter,
      // Never the answer's body: the receiver's words are its owner's, shown in the deliveries log only.
      durationMs: result.durationMs,
      ...(recorded ? {} : { recorded }),
    },
    'webhook attempt',
  );
  if (recorded === false) return;
  metrics.webhookDeliveries.inc({ outcome: outcome.status === 'pending' ? 'retried' : outcome.status });
  if (recorded === true) return;
  metrics.webhookEndpointsDisabled.inc({ reason: recorded });
  log.warn({ endpointId: delivery.endpoint.id, reason: recorded }, 'webhook endpoint disabled');
}

/** A receiver that answers 410 Gone says the endpoint is no more: it is disabled at once. */
const GONE = 410;

function outcomeOf(
  delivery: DueDelivery,
  result: SendResult,
  attemptedAt: Date,
  { retrySchedule, disableAfterMs }: DispatcherOptions,
): AttemptOutcome {
  const now = Date.now();
  const wait = askedWait(result, now, retrySchedule);
  const ended = {
    delivery,
    attemptedAt,
    responseStatus: result.responseStatus,
    error: result.error,
    durationMs: result.durationMs,
    responseBody: result.responseBody?.text,
    responseBodyTruncated: result.responseBody?.truncated,
    pausedUntil: wait === undefined ? undefined : new Date(now + wait),
    gone: result.responseStatus === GONE,
    disableIfFailingSince: disableAfterMs === undefined ? undefined : new Date(attemptedAt.getTime() - disableAfterMs),
    stopped: result.stopped,
  };
  if (result.delivered) return { ...ended, status: 'succeeded', nextAttemptAt: undefined };
  // Cut off by the stop: due again now, whatever the schedule, by another instance or this one restarted.
  if (result.stopped) return { ...ended, status: 'pending', nextAttemptAt: new Date(now) };
  const delay = retrySchedule[delivery.attempt - 1];
  if (delay === undefined) return { ...ended, status: 'failed', nextAttemptAt: undefined };
  // No earlier than the schedule, nor than the receiver asked: the later of the two.
  return { ...ended, status: 'pending', nextAttemptAt: new Date(now + Math.max(delay, wait ?? 0)) };
}

/**
 * The wait a 429 or 503 asked for with Retry-After, in ms from `now`, capped at the schedule's longest
 * delay (a receiver holds its deliveries no longer than the schedule would); none when it asked for none,
 * or for something unparseable.
 */
function askedWait(result: SendResult, now: number, retrySchedule: readonly number[]): number | undefined {
  const asked = retryAfterMs(result.retryAfter, new Date(now));
  return asked === undefined || asked <= 0 ? undefined : Math.min(asked, Math.max(...retrySchedule));
}

/**
 * Records the attempt, trying again while the database is away, for as long as the claim holds: an
 * attempt that is sent but not recorded would be sent again once the lease ends. False when it was not
 * recorded: the claim was lost (the delivery was claimed again, or removed), or it ran out.
 */
async function record(outcome: AttemptOutcome, context: AttemptContext): Promise<AttemptRecorded> {
  const { deliveries, log, signal } = context;
  for (let wait = RECORD_RETRY_MS.first; ; wait = Math.min(2 * wait, RECORD_RETRY_MS.max)) {
    try {
      return await deliveries.finish(outcome);
    } catch (error) {
      if (signal.aborted || Date.now() + wait >= outcome.delivery.claimedUntil.getTime()) {
        log.warn({ err: error }, 'recording a webhook attempt failed; it will be sent again after its lease');
        return false;
      }
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    }
  }
}
