import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BACKENDS } from '../helpers/stores.js';
import { OPEN_BEFORE } from '../helpers/upgrade.js';

/**
 * Upgrading to pet versions (issue 38) loses nothing: a database made by the release before them, with pets
 * and orders (the newest order's row gone, so its id is spent but not the largest kept), opened by this
 * build. Every pet is at version 1, the orders are as they were, new order ids go on after every id handed
 * out, and a pet whose orders are done can be deleted, its orders keeping their petId.
 */

const BEFORE = [
  `INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'pending'), ('Tom', 2, 'available')`,
  `INSERT INTO orders (pet_id, quantity, status, created_at) VALUES (1, 1, 'cancelled', 0), (1, 2, 'placed', 0),
    (2, 1, 'cancelled', 0)`,
  'DELETE FROM orders WHERE id = 3',
];

/** What the versions' migration, and no earlier one, does. */
const VERSIONS_MIGRATION = 'ALTER TABLE pets ADD COLUMN version';

for (const backend of BACKENDS) {
  describe(`upgrading to pet versions [${backend.name}]`, () => {
    test('pets start at version 1, orders stay, ids go on, and a pet whose orders are done can go', {
      skip: backend.skip,
    }, async (t) => {
      const statements =
        backend.name === 'postgres'
          ? BEFORE.map((statement) => statement.replaceAll(', 0)', ', to_timestamp(0))'))
          : BEFORE;
      const store = await OPEN_BEFORE[backend.name](t, VERSIONS_MIGRATION, statements);
      assert.deepEqual(await store.pets.list({ limit: 10 }), [
        { id: 1, name: 'Rex', categoryId: 1, status: 'pending', version: 1 },
        { id: 2, name: 'Tom', categoryId: 2, status: 'available', version: 1 },
      ]);
      const orders = await store.orders.list({ limit: 10 });
      assert.deepEqual(
        orders.map((order) => [order.id, order.petId, order.quantity, order.status, order.createdAt.getTime()]),
        [
          [1, 1, 1, 'cancelled', 0],
          [2, 1, 2, 'placed', 0],
        ],
      );
      const placed = await store.orders.place({ petId: 2, quantity: 1, createdAt: new Date() });
      assert.equal(placed.outcome === 'placed' ? placed.order.id : placed.outcome, 4, 'order ids go on after 3');
      assert.deepEqual(await store.pets.remove(1, [1]), { outcome: 'held', order: { id: 2, status: 'placed' } });
      await store.orders.changeStatus(2, 'cancelled');
      const removed = await store.pets.remove(1, [2]);
      assert.equal(removed.outcome, 'removed');
      assert.deepEqual(
        (await store.orders.list({ limit: 10 })).map((order) => order.petId),
        [1, 1, 2],
        "the deleted pet's orders keep its id",
      );
    });
  });
}
