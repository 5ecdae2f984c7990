import type { Clock } from '../clock.js';
import type { CursorCodec } from '../domain/cursor.js';
import type { Idempotency } from '../http/idempotency.js';
import type { Links } from '../http/links.js';
import type { Store } from '../store/store.js';

/** What the resource routes are given by the composition root. */
export interface RouteOptions {
  readonly store: Store;
  readonly idempotency: Idempotency;
  readonly clock: Clock;
  /** Each list's cursors are signed for that list alone. */
  readonly cursors: {
    readonly pets: CursorCodec;
    readonly orders: CursorCodec;
    readonly webhooks: CursorCodec;
    readonly webhookDeliveries: CursorCodec;
    readonly auditLog: CursorCodec;
  };
  readonly links: Links;
}
