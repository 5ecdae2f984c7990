import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError } from '../helpers/calls.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { eachBackend } from '../helpers/stores.js';

async function availablePet(h: Harness, name = 'Rex'): Promise<{ id: number }> {
  const result = await h.call('POST', '/v1/pets', { body: { name, categoryId: 1 } });
  assert.equal(result.status, 201);
  return result.json;
}

async function petStatus(h: Harness, id: number): Promise<string> {
  return (await h.call('GET', `/v1/pets/${id}`)).json.status;
}

async function placed(h: Harness, petId: number): Promise<any> {
  const result = await h.call('POST', '/v1/store/orders', { body: { petId } });
  assert.equal(result.status, 201, result.text);
  return result.json;
}

function patch(h: Harness, orderId: number, status: string, key?: string) {
  return h.call('PATCH', `/v1/store/orders/${orderId}`, { body: { status }, ...(key === undefined ? {} : { key }) });
}

/** Ids of the pets a status filter lists, so each test can see a transition reflected at once. */
async function listedWithStatus(h: Harness, status: string): Promise<number[]> {
  return (await h.call('GET', `/v1/pets?status=${status}&limit=100`)).json.map((pet: { id: number }) => pet.id);
}

eachBackend((backend) => {
  describe(`orders [${backend.name}]`, () => {
    test('placing an order: 201, the Order, Location, and the pet becomes pending at once', async (t) => {
      const h = await startHarness(t, backend);
      const pet = await availablePet(h);
      const result = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id, quantity: 2 } });
      assert.equal(result.status, 201);
      const order = result.json;
      assert.deepEqual(Object.keys(order).sort(), ['complete', 'createdAt', 'id', 'petId', 'quantity', 'status']);
      assert.equal(order.petId, pet.id);
      assert.equal(order.quantity, 2);
      assert.equal(order.status, 'placed');
      assert.equal(order.complete, false);
      assert.ok(Math.abs(Date.parse(order.createdAt) - Date.now()) < 60_000);
      assert.equal(result.headers.get('location'), `/v1/store/orders/${order.id}`);
      assert.deepEqual((await h.call('GET', `/v1/store/orders/${order.id}`)).json, order);
      assert.equal(await petStatus(h, pet.id), 'pending');
      assert.deepEqual(await listedWithStatus(h, 'pending'), [pet.id]);
      assert.deepEqual(await listedWithStatus(h, 'available'), []);
      assert.equal((await placed(h, (await availablePet(h, 'Tom')).id)).quantity, 1, 'quantity defaults to 1');
    });

    test('the happy path: placed → approved → delivered; the pet ends sold and the order complete', async (t) => {
      const h = await startHarness(t, backend);
      const pet = await availablePet(h);
      const order = await placed(h, pet.id);
      const approved = await patch(h, order.id, 'approved');
      assert.equal(approved.status, 200);
      assert.equal(approved.json.status, 'approved');
      assert.equal(approved.json.complete, false);
      assert.deepEqual(await listedWithStatus(h, 'pending'), [pet.id]);
      const delivered = await patch(h, order.id, 'delivered');
      assert.equal(delivered.status, 200);
      assert.equal(delivered.json.status, 'delivered');
      assert.equal(delivered.json.complete, true);
      assert.deepEqual(await listedWithStatus(h, 'sold'), [pet.id]);
      assert.deepEqual(await listedWithStatus(h, 'pending'), []);
    });

    test('cancelling from placed or approved makes the pet available again, and it can be ordered again', async (t) => {
      const h = await startHarness(t, backend);
      for (const via of [[], ['approved']]) {
        const pet = await availablePet(h);
        const order = await placed(h, pet.id);
        for (const step of via) assert.equal((await patch(h, order.id, step)).status, 200);
        const cancelled = await patch(h, order.id, 'cancelled');
        assert.equal(cancelled.status, 200);
        assert.equal(cancelled.json.status, 'cancelled');
        assert.equal(await petStatus(h, pet.id), 'available');
        assert.ok((await listedWithStatus(h, 'available')).includes(pet.id));
        await placed(h, pet.id);
      }
    });

    test('every refused move is 409 naming the allowed moves, and changes nothing', async (t) => {
      const h = await startHarness(t, backend);
      const refused: Array<[string[], string, RegExp]> = [
        [[], 'delivered', /from placed it can move to: approved, cancelled/],
        [[], 'placed', /from placed it can move to: approved, cancelled/],
        [['approved'], 'approved', /from approved it can move to: delivered, cancelled/],
        [['approved'], 'placed', /from approved it can move to: delivered, cancelled/],
        [['approved', 'delivered'], 'cancelled', /delivered is final/],
        [['approved', 'delivered'], 'approved', /delivered is final/],
        [['approved', 'delivered'], 'placed', /delivered is final/],
        [['cancelled'], 'approved', /cancelled is final/],
        [['cancelled'], 'placed', /cancelled is final/],
        [['cancelled'], 'delivered', /cancelled is final/],
      ];
      for (const [path, target, rule] of refused) {
        const pet = await availablePet(h);
        const order = await placed(h, pet.id);
        for (const step of path) assert.equal((await patch(h, order.id, step)).status, 200);
        const before = {
          order: (await h.call('GET', `/v1/store/orders/${order.id}`)).json,
          pet: await petStatus(h, pet.id),
        };
        const message = expectError(await patch(h, order.id, target), 409, 'conflict');
        assert.match(message, rule, `${[...path, target].join(' → ')}`);
        assert.deepEqual((await h.call('GET', `/v1/store/orders/${order.id}`)).json, before.order);
        assert.equal(await petStatus(h, pet.id), before.pet);
      }
    });

    test('placing: 404 for a missing pet, 409 for a pet that is not available, nothing written', async (t) => {
      const h = await startHarness(t, backend);
      expectError(await h.call('POST', '/v1/store/orders', { body: { petId: 999 } }), 404, 'not_found');
      for (const status of ['pending', 'sold']) {
        const pet = (await h.call('POST', '/v1/pets', { body: { name: 'x', categoryId: 1, status } })).json;
        const message = expectError(
          await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } }),
          409,
          'conflict',
        );
        assert.match(message, new RegExp(`pet ${pet.id} is ${status}, not available`));
        assert.equal(await petStatus(h, pet.id), status);
      }
      const pet = await availablePet(h);
      await placed(h, pet.id);
      expectError(await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } }), 409, 'conflict');
      assert.equal((await h.call('GET', '/v1/store/orders')).json.length, 1);
    });

    test('bad input is 400 naming the field or parameter, nothing written', async (t) => {
      const h = await startHarness(t, backend);
      const pet = await availablePet(h);
      const bodies: Array<[unknown, RegExp]> = [
        [{}, /body\.petId is required/],
        [{ petId: '1' }, /body\.petId must be an integer/],
        [{ petId: 0 }, /body\.petId must be >= 1/],
        [{ petId: 9007199254740992 }, /body\.petId must be <= 9007199254740991/],
        [{ petId: pet.id, quantity: 0 }, /body\.quantity must be >= 1/],
        [{ petId: pet.id, quantity: 1.5 }, /body\.quantity must be an integer/],
        [{ petId: pet.id, quantity: 1001 }, /body\.quantity must be <= 1000/],
        [{ petId: pet.id, status: 'approved' }, /unknown field "status"/],
        [{ petId: pet.id, id: 4 }, /body\.id must not be sent/],
      ];
      for (const [body, rule] of bodies) {
        assert.match(expectError(await h.call('POST', '/v1/store/orders', { body }), 400, 'invalid_request'), rule);
      }
      assert.equal(await petStatus(h, pet.id), 'available');
      const order = await placed(h, pet.id);
      const patches: Array<[unknown, RegExp]> = [
        [{}, /body\.status is required/],
        [{ status: 'shipped' }, /body\.status must be one of: placed, approved, delivered, cancelled/],
        [{ status: null }, /body\.status must be one of/],
        [{ status: 'approved', quantity: 3 }, /unknown field "quantity"/],
      ];
      for (const [body, rule] of patches) {
        const message = expectError(
          await h.call('PATCH', `/v1/store/orders/${order.id}`, { body }),
          400,
          'invalid_request',
        );
        assert.match(message, rule);
      }
      assert.match(
        expectError(await h.call('GET', '/v1/store/orders/abc'), 400, 'invalid_request'),
        /path parameter "orderId" must be an integer/,
      );
      assert.match(
        expectError(await h.call('GET', '/v1/store/orders?status=lost'), 400, 'invalid_request'),
        /query parameter "status" must be one of: placed, approved, delivered, cancelled/,
      );
      expectError(await h.call('GET', '/v1/store/orders?limit=101'), 400, 'invalid_request');
      assert.equal((await h.call('GET', `/v1/store/orders/${order.id}`)).json.status, 'placed');
    });

    test('404 for orders that do not exist, on get and on patch', async (t) => {
      const h = await startHarness(t, backend);
      for (const id of ['1', '0', '-3', '9007199254740991']) {
        expectError(await h.call('GET', `/v1/store/orders/${id}`), 404, 'not_found');
        expectError(await patch(h, Number(id), 'approved'), 404, 'not_found');
      }
    });

    test('scopes: read lists and gets; placing and moving need write (403); no key is 401', async (t) => {
      const h = await startHarness(t, backend);
      const pet = await availablePet(h);
      const order = await placed(h, pet.id);
      assert.equal((await h.call('GET', '/v1/store/orders', { key: h.keys.read })).status, 200);
      assert.equal((await h.call('GET', `/v1/store/orders/${order.id}`, { key: h.keys.read })).status, 200);
      const other = await availablePet(h, 'Tom');
      expectError(
        await h.call('POST', '/v1/store/orders', { key: h.keys.read, body: { petId: other.id } }),
        403,
        'forbidden',
      );
      expectError(await patch(h, order.id, 'approved', h.keys.read), 403, 'forbidden');
      expectError(await h.call('GET', '/v1/store/orders', { key: h.keys.write }), 403, 'forbidden');
      for (const [method, path] of [
        ['GET', '/v1/store/orders'],
        ['POST', '/v1/store/orders'],
        ['GET', `/v1/store/orders/${order.id}`],
        ['PATCH', `/v1/store/orders/${order.id}`],
      ]) {
        const body = method === 'GET' ? undefined : {};
        expectError(await h.call(method as string, path as string, { key: null, body }), 401, 'unauthorized');
      }
      assert.equal(await petStatus(h, other.id), 'available');
      assert.equal((await h.call('GET', `/v1/store/orders/${order.id}`)).json.status, 'placed');
    });

    test('PATCH accepts application/merge-patch+json; other types are 415', async (t) => {
      const h = await startHarness(t, backend);
      const order = await placed(h, (await availablePet(h)).id);
      const merged = await h.call('PATCH', `/v1/store/orders/${order.id}`, {
        body: '{"status":"approved"}',
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      assert.equal(merged.status, 200, merged.text);
      expectError(
        await h.call('PATCH', `/v1/store/orders/${order.id}`, {
          body: 'status=delivered',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        415,
        'unsupported_media_type',
      );
      const wrongMethod = await h.call('DELETE', `/v1/store/orders/${order.id}`);
      expectError(wrongMethod, 405, 'method_not_allowed');
      assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD, PATCH');
    });

    test('listing orders: id order, status filter, limit, and cursor pages bound to the filter', async (t) => {
      const h = await startHarness(t, backend);
      const orders = [];
      for (let i = 0; i < 25; i++) orders.push(await placed(h, (await availablePet(h, `p${i}`)).id));
      for (const order of orders.slice(0, 10)) assert.equal((await patch(h, order.id, 'approved')).status, 200);
      const first = await h.call('GET', '/v1/store/orders');
      assert.equal(first.json.length, 20);
      assert.deepEqual(
        first.json.map((o: { id: number }) => o.id),
        orders.slice(0, 20).map((o) => o.id),
      );
      const seen: number[] = [];
      let next: string | undefined = '/v1/store/orders?limit=4&status=approved';
      while (next !== undefined) {
        const page = await h.call('GET', next);
        assert.equal(page.status, 200);
        for (const order of page.json) assert.equal(order.status, 'approved');
        seen.push(...page.json.map((o: { id: number }) => o.id));
        next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
        if (next !== undefined) assert.match(next, /^\/v1\/store\/orders\?limit=4&status=approved&cursor=/);
      }
      assert.deepEqual(
        seen,
        orders.slice(0, 10).map((o) => o.id),
      );
      const link = /<([^>]+)>/.exec((await h.call('GET', '/v1/store/orders?limit=2')).headers.get('link') ?? '')?.[1];
      const cursor = new URL(link ?? '', 'http://x').searchParams.get('cursor');
      expectError(await h.call('GET', `/v1/store/orders?status=placed&cursor=${cursor}`), 400, 'invalid_request');
      const petsCursor = new URL(
        /<([^>]+)>/.exec((await h.call('GET', '/v1/pets?limit=2')).headers.get('link') ?? '')?.[1] ?? '',
        'http://x',
      ).searchParams.get('cursor');
      assert.match(
        expectError(await h.call('GET', `/v1/store/orders?cursor=${petsCursor}`), 400, 'invalid_request'),
        /not a cursor this service issued/,
        'a pets cursor is refused by the orders list',
      );
    });

    test('race: 50 concurrent orders for one pet → exactly one 201 and 49 × 409, on two instances', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      const pet = await availablePet(h);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? other : h).call('POST', '/v1/store/orders', { body: { petId: pet.id } }),
        ),
      );
      const statuses = results.map((result) => result.status).sort();
      assert.deepEqual(statuses, [201, ...Array(49).fill(409)]);
      for (const result of results.filter((r) => r.status === 409)) expectError(result, 409, 'conflict');
      assert.equal(await petStatus(h, pet.id), 'pending');
      const stored = (await h.call('GET', '/v1/store/orders?limit=100')).json;
      assert.equal(stored.length, 1);
      assert.equal(stored[0].petId, pet.id);
    });

    test('race: the same move sent concurrently through two instances applies once', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      for (const target of ['approved', 'cancelled']) {
        const pet = await availablePet(h);
        const order = await placed(h, pet.id);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => patch(i % 2 ? other : h, order.id, target)),
        );
        assert.equal(results.filter((result) => result.status === 200).length, 1, target);
        for (const result of results.filter((r) => r.status !== 200)) expectError(result, 409, 'conflict');
        assert.equal((await h.call('GET', `/v1/store/orders/${order.id}`)).json.status, target);
        assert.equal(await petStatus(h, pet.id), target === 'approved' ? 'pending' : 'available');
      }
    });
  });
});
