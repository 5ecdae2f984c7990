import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';

/** One warning a minute at most: an outage would otherwise log on every request. /metrics counts each one. */
const WARN_INTERVAL_MS = 60_000;

/**
 * What a limiter's `unknown` means: the request passes unlimited (an unreachable Redis must not take the
 * API down with it), it is counted, and operators are told, once a minute at most.
 */
export class FailOpen {
  readonly #log: FastifyBaseLogger;
  readonly #passed: Counter;
  #warnedAt = Number.NEGATIVE_INFINITY;

  constructor(log: FastifyBaseLogger, passed: Counter) {
    this.#log = log;
    this.#passed = passed;
  }

  /** Called for a request the limiter could not judge; it is let through. */
  pass(error: unknown): void {
    this.#passed.inc();
    const now = Date.now();
    if (now - this.#warnedAt < WARN_INTERVAL_MS) return;
    this.#warnedAt = now;
    this.#log.warn({ err: error }, 'Redis unavailable: rate limits are not enforced until it returns');
  }
}
