import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedMoves, isComplete, move, ORDER_STATUSES } from '../../src/domain/order-status.js';
import { ERRORS } from '../../src/errors/catalogue.js';

test('the allowed moves and the pet status each leaves', () => {
  assert.deepEqual(move('placed', 'approved'), { allowed: true, petStatus: 'pending' });
  assert.deepEqual(move('approved', 'delivered'), { allowed: true, petStatus: 'sold' });
  assert.deepEqual(move('placed', 'cancelled'), { allowed: true, petStatus: 'available' });
  assert.deepEqual(move('approved', 'cancelled'), { allowed: true, petStatus: 'available' });
});

test('every other move is refused, with a reason that names the allowed moves', () => {
  const allowed = new Set(['placed>approved', 'approved>delivered', 'placed>cancelled', 'approved>cancelled']);
  for (const from of ORDER_STATUSES) {
    for (const to of ORDER_STATUSES) {
      const result = move(from, to);
      assert.equal(result.allowed, allowed.has(`${from}>${to}`), `${from} → ${to}`);
      if (!result.allowed) {
        const options = allowedMoves(from);
        const reason = ERRORS.orderMoveRefused.message(from, to, options);
        assert.match(reason, new RegExp(`cannot move from ${from} to ${to}`));
        assert.match(reason, options.length === 0 ? /is final/ : new RegExp(options.join(', ')));
      }
    }
  }
});

test('delivered and cancelled are final; only delivered is complete', () => {
  assert.deepEqual(allowedMoves('delivered'), []);
  assert.deepEqual(allowedMoves('cancelled'), []);
  assert.deepEqual(
    ORDER_STATUSES.filter((status) => isComplete(status)),
    ['delivered'],
  );
});
