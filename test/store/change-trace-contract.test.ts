import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, test } from 'node:test';
import { EVENT_TYPES } from '../../src/domain/event-types.js';
import type { DueDelivery } from '../../src/store/records.js';
import { claimEverything } from '../helpers/claims.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { eachBackend } from '../helpers/stores.js';

const traceparent = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${n.toString(16).padStart(16, '0')}-01`;

/** What a delivery is about, as the test names it: the pet's name for a creation, else the event type. */
function about(delivery: DueDelivery): string {
  const { event } = delivery;
  return event.type === 'pet.created' ? event.pet.name : event.type;
}

eachBackend((backend) => {
  describe(`change traces [${backend.name}]`, () => {
    test('each change records the trace it was asked in, batched or not, and its deliveries carry it', async (t) => {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      // Stands in for OpenTelemetry's context: the trace of whoever asked for the write.
      const asked = new AsyncLocalStorage<string>();
      const store = await fixture.reopen(() => asked.getStore() ?? null);
      const createdAt = new Date();
      await addEndpoint(store, {
        url: 'https://hooks.example.com/in',
        events: [...EVENT_TYPES],
        description: null,
        secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0',
        createdAt,
        // Every delivery claimed at once: each pet's events are the trace's, not the order's, business here.
        ordering: 'none',
      });

      // Asked in one turn of the event loop: both stores write them as one batch.
      const pets = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          asked.run(traceparent(i + 1), () =>
            store.pets.create({ name: `p${i + 1}`, categoryId: 1, status: 'available' }),
          ),
        ),
      );
      const idOf = (i: number): number => (pets[i] as { id: number }).id;
      const placed = await asked.run(traceparent(100), () =>
        store.orders.place({ petId: idOf(0), quantity: 1, createdAt }),
      );
      assert.equal(placed.outcome, 'placed');
      const orderId = placed.outcome === 'placed' ? placed.order.id : 0;
      const changed = await asked.run(traceparent(101), () => store.orders.changeStatus(orderId, 'cancelled'));
      assert.equal(changed.outcome, 'changed');
      const renamed = await asked.run(traceparent(102), () =>
        store.pets.update(idOf(1), { name: 'renamed' }, undefined),
      );
      assert.equal(renamed.outcome, 'updated');
      const removed = await asked.run(traceparent(103), () => store.pets.remove(idOf(2), undefined));
      assert.equal(removed.outcome, 'removed');
      await store.pets.create({ name: 'untraced', categoryId: 1, status: 'available' });

      const claimed = await claimEverything(store);
      assert.deepEqual(
        claimed.map((delivery) => [about(delivery), delivery.trace]),
        [
          ...pets.map((_, i) => [`p${i + 1}`, traceparent(i + 1)]),
          ['order.placed', traceparent(100)],
          ['pet.status_changed', traceparent(100)],
          ['order.status_changed', traceparent(101)],
          ['pet.status_changed', traceparent(101)],
          ['pet.updated', traceparent(102)],
          ['pet.deleted', traceparent(103)],
          ['untraced', null],
        ],
      );
    });
  });
});
