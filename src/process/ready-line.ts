/**
 * The line a start ends with, once the service listens and any first key is printed: `"msg":"ready"` with
 * the `url` it serves. Operators wait for it (docs/operations.md, "Logs and metrics"), and so do the tests and the bench
 * (dev/service-process.ts), which match on these names rather than on a copy of the text.
 */
export const READY_MESSAGE = 'ready';

export interface ReadyFields {
  /** e.g. http://127.0.0.1:43210 */
  readonly url: string;
  /** Under `serve --workers N`: N. */
  readonly workers?: number;
}

/** Writes the ready line to `log` (pino's or Fastify's logger). */
export function logReady(log: { info(fields: ReadyFields, message: string): void }, fields: ReadyFields): void {
  log.info(fields, READY_MESSAGE);
}
