import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { DueDelivery } from '../store/records.js';
import type { SendResult } from './send-webhook.js';

/**
 * One webhook attempt as a client span of the trace its event's change was made in (a new trace when none
 * was recorded): each attempt, failed or not, is a span of its own, and the receiver gets its traceparent.
 */
export class AttemptSpan {
  readonly #span: Span;
  readonly #context: Context;

  constructor(tracer: Tracer, delivery: DueDelivery, eventId: string) {
    const change =
      delivery.trace === null ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { traceparent: delivery.trace });
    const url = new URL(delivery.endpoint.url);
    this.#span = tracer.startSpan(
      `webhook ${delivery.event.type}`,
      {
        kind: SpanKind.CLIENT,
        // The URL's host only: its path and query may hold a receiver's own token.
        attributes: {
          'http.request.method': 'POST',
          'server.address': url.hostname,
          'url.scheme': url.protocol.slice(0, -1),
          'petstore.webhook.endpoint_id': delivery.endpoint.id,
          'petstore.webhook.attempt': delivery.attempt,
          'petstore.event.id': eventId,
        },
      },
      change,
    );
    this.#context = trace.setSpan(change, this.#span);
  }

  /** Runs `work` in the span: the store calls it makes (recording the attempt) are its children. */
  within<T>(work: () => Promise<T>): Promise<T> {
    return context.with(this.#context, work);
  }

  /** `traceparent` (W3C Trace Context) naming this attempt, for the request's headers. */
  headers(): Record<string, string> {
    const carrier: Record<string, string> = {};
    propagation.inject(this.#context, carrier);
    return carrier;
  }

  /** How the request went: a failed attempt is an error span, with the reason recorded for it. */
  sent(result: SendResult): void {
    if (result.responseStatus !== undefined)
      this.#span.setAttribute('http.response.status_code', result.responseStatus);
    if (result.delivered) return;
    this.#span.setAttribute(
      'error.type',
      result.responseStatus === undefined ? 'no answer' : String(result.responseStatus),
    );
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? 'not delivered' });
  }

  end(): void {
    this.#span.end();
  }
}
