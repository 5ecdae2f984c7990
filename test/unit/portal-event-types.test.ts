import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_SUBSCRIPTION, EVENT_TYPES, type EventType } from '../../src/domain/event-types.js';
import { DEFAULT_EVENTS, EVENT_TYPES as PAGE_EVENT_TYPES } from '../../src/portal/page/event-types.js';

/**
 * The portal page keeps its own list of the event types (src/portal/page/event-types.ts: it is compiled apart
 * and imports nothing of the service). These two lines hold the lists to the same types at compile time: a
 * type added on one side only is a type error here that names it.
 */
const onThePage: readonly EventType[] = PAGE_EVENT_TYPES;
const ofTheService: readonly (typeof PAGE_EVENT_TYPES)[number][] = EVENT_TYPES;

test("the portal page offers the service's event types, in its order, the default ones checked", () => {
  assert.deepEqual(onThePage, ofTheService);
  assert.deepEqual(DEFAULT_EVENTS, DEFAULT_SUBSCRIPTION);
});
