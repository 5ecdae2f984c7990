import type { ErrorBody } from '../schemas/error.js';

/**
 * Codes for failures that got no usable answer from the service:
 * - `network_error`: the request or its response was lost (connection refused or reset, DNS); status 0.
 * - `timeout`: an attempt took longer than `timeoutMs`; status 0.
 * - `aborted`: the caller's `signal` aborted the call; status 0.
 * - `invalid_response`: an answer that is not the API's (a proxy's HTML error page, a body that is not JSON);
 *   status is the HTTP status received.
 */
export type ClientErrorCode = 'network_error' | 'timeout' | 'aborted' | 'invalid_response';

/**
 * The service's codes (docs/errors.md) and the client's own. A newer service may add codes within /v1,
 * so any other string can arrive too; treat an unknown code by its `status`.
 */
export type PetstoreErrorCode = ErrorBody['code'] | ClientErrorCode | (string & Record<never, never>);

export interface PetstoreErrorInit {
  readonly code: PetstoreErrorCode;
  readonly status: number;
  readonly message: string;
  readonly retryAfter?: number | undefined;
  readonly cause?: unknown;
}

/** Every failure of a client call: the service's Error body, or a client-side code with status 0. */
export class PetstoreError extends Error {
  override readonly name = 'PetstoreError';
  /** The Error body's `code`, or a {@link ClientErrorCode}. */
  readonly code: PetstoreErrorCode;
  /** The HTTP status; 0 when no response arrived. */
  readonly status: number;
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;

  constructor(init: PetstoreErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.retryAfter = init.retryAfter;
  }
}
