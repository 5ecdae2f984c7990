import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type CallResult, expectError } from '../helpers/calls.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { isStream, openStream } from '../helpers/sse-client.js';
import { eachBackend } from '../helpers/stores.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/** Pets you can correct (issue 38): PATCH and DELETE /v1/pets/{petId}, their versions and their events. */

const get = (h: Harness) => (path: string) => h.call('GET', path);

const patch = (h: Harness, id: number, body: unknown, headers: Record<string, string> = {}) =>
  h.call('PATCH', `/v1/pets/${id}`, { body, headers: { 'content-type': 'application/merge-patch+json', ...headers } });

/** Places an order for the pet (201 asserted) and returns it. */
async function order(h: Harness, petId: number): Promise<any> {
  const placed = await h.call('POST', '/v1/store/orders', { body: { petId } });
  assert.equal(placed.status, 201, placed.text);
  return placed.json;
}

function assertEtag(result: CallResult, etag: string): void {
  assert.equal(result.headers.get('etag'), etag, result.text);
}

eachBackend((backend) => {
  describe(`pets you can correct [${backend.name}]`, () => {
    test('PATCH changes the fields sent, keeps the others, and answers the Pet with its new ETag', async (t) => {
      const h = await startHarness(t, backend);
      const created = await h.call('POST', '/v1/pets', { body: { name: 'Rexx', categoryId: 1 } });
      assertEtag(created, '"1"');
      const rex = created.json;
      const renamed = await patch(h, rex.id, { name: 'Rex' });
      assert.equal(renamed.status, 200, renamed.text);
      assert.deepEqual(renamed.json, { ...rex, name: 'Rex' });
      assertEtag(renamed, '"2"');
      const moved = await h.call('PATCH', `/v1/pets/${rex.id}`, { body: { categoryId: 7, status: 'sold' } });
      assert.equal(moved.status, 200, 'application/json is a merge patch too');
      assert.deepEqual(moved.json, { ...rex, name: 'Rex', categoryId: 7, status: 'sold' });
      assertEtag(moved, '"3"');
      const read = await h.call('GET', `/v1/pets/${rex.id}`);
      assert.deepEqual(read.json, moved.json);
      assertEtag(read, '"3"');
      for (const nothing of [{}, { name: 'Rex', status: 'sold' }]) {
        const same = await patch(h, rex.id, nothing);
        assert.equal(same.status, 200);
        assert.deepEqual(same.json, moved.json);
        assertEtag(same, '"3"');
      }
      const events = await settledFeed(get(h), 4);
      assert.deepEqual(
        events.map((event) => [event.type, event.etag, event.previous ?? event.previousStatus]),
        [
          ['pet.created', '"1"', undefined],
          ['pet.updated', '"2"', { name: 'Rexx' }],
          ['pet.updated', '"3"', { categoryId: 1, status: 'available' }],
          ['pet.status_changed', '"3"', 'available'],
        ],
        'a change that changes nothing records nothing',
      );
      assert.deepEqual(events[1].data, renamed.json);
      assert.deepEqual(events[3].data, moved.json);
    });

    test('PATCH refuses bad patches with 400 naming the field, and writes nothing', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      const cases: Array<[unknown, RegExp]> = [
        [{ id: 5 }, /body\.id must not be sent/],
        [{ name: 'x', owner: 'me' }, /body has unknown field "owner"/],
        [{ categoryId: 'x' }, /body\.categoryId must be an integer/],
        [{ categoryId: 0 }, /body\.categoryId must be >= 1/],
        [{ status: 'lost' }, /body\.status must be one of: available, pending, sold/],
        [{ name: null }, /body\.name must be of type string/],
        [{ name: '' }, /body\.name must have at least 1 character/],
        [{ name: '   ' }, /body\.name must contain a character other than white space/],
        [{ name: 'x'.repeat(201) }, /body\.name must have at most 200 characters/],
        [[{ name: 'x' }], /body must be of type object/],
      ];
      for (const [body, message] of cases) {
        assert.match(expectError(await patch(h, pet.id, body), 400, 'invalid_request'), message, JSON.stringify(body));
      }
      expectError(await patch(h, pet.id, '{"name":'), 400, 'invalid_request');
      expectError(
        await h.call('PATCH', `/v1/pets/${pet.id}`, { body: 'name=x', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      const read = await h.call('GET', `/v1/pets/${pet.id}`);
      assert.deepEqual(read.json, pet);
      assertEtag(read, '"1"');
      assert.equal((await settledFeed(get(h), 1)).length, 1);
    });

    test('404 for a pet that does not exist, deleted included; 401 without a key, 403 without write', async (t) => {
      const h = await startHarness(t, backend);
      const [pet, gone] = await h.createPets(2);
      assert.equal((await h.call('DELETE', `/v1/pets/${gone.id}`)).status, 204);
      for (const id of [gone.id, gone.id + 1, 0, -1]) {
        assert.match(expectError(await patch(h, id, { name: 'x' }), 404, 'not_found'), /does not exist/);
        expectError(await patch(h, id, { name: 'x' }, { 'if-match': '"1"' }), 404, 'not_found');
        expectError(await h.call('DELETE', `/v1/pets/${id}`), 404, 'not_found');
      }
      for (const method of ['PATCH', 'DELETE']) {
        const body = method === 'PATCH' ? { name: 'x' } : undefined;
        expectError(await h.call(method, `/v1/pets/${pet.id}`, { body, key: null }), 401, 'unauthorized');
        const refused = await h.call(method, `/v1/pets/${pet.id}`, { body, key: h.keys.read });
        assert.match(expectError(refused, 403, 'forbidden'), /"write" scope/);
      }
      const writer = await patch(h, pet.id, { name: 'by writer' }, {});
      assert.equal(writer.status, 200);
      assert.equal((await h.call('GET', `/v1/pets/${pet.id}`)).json.name, 'by writer');
    });

    test('while an order holds a pet its status stays and it cannot be deleted: 409 naming the order', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      const placed = await order(h, pet.id);
      const status = expectError(await patch(h, pet.id, { status: 'available' }), 409, 'conflict');
      assert.match(status, new RegExp(`pet ${pet.id} cannot change while order ${placed.id} \\(placed\\) holds it`));
      const renamed = await patch(h, pet.id, { name: 'Held', status: 'pending' });
      assert.equal(renamed.status, 200, 'other fields change; the status sent as it is changes nothing');
      assert.equal(
        (await h.call('PATCH', `/v1/store/orders/${placed.id}`, { body: { status: 'approved' } })).status,
        200,
      );
      const removal = expectError(await h.call('DELETE', `/v1/pets/${pet.id}`), 409, 'conflict');
      assert.match(removal, new RegExp(`pet ${pet.id} cannot be deleted while order ${placed.id} \\(approved\\)`));
      assert.equal(
        (await h.call('PATCH', `/v1/store/orders/${placed.id}`, { body: { status: 'delivered' } })).status,
        200,
      );
      const sold = await h.call('GET', `/v1/pets/${pet.id}`);
      assert.equal(sold.json.status, 'sold');
      const back = await patch(h, pet.id, { status: 'available' }, { 'if-match': sold.headers.get('etag') ?? '' });
      assert.equal(back.status, 200, "once the order is done, the status is the clerk's again");
      assert.equal((await h.call('DELETE', `/v1/pets/${pet.id}`)).status, 204);
      const orderAfter = await h.call('GET', `/v1/store/orders/${placed.id}`);
      assert.equal(orderAfter.json.petId, pet.id, 'its orders keep their petId');
    });

    test('DELETE: 204, then 404 everywhere and never listed; a second DELETE is 404', async (t) => {
      const h = await startHarness(t, backend);
      const [a, b, c] = await h.createPets(3);
      const removed = await h.call('DELETE', `/v1/pets/${b.id}`);
      assert.equal(removed.status, 204);
      assert.equal(removed.text, '');
      expectError(await h.call('GET', `/v1/pets/${b.id}`), 404, 'not_found');
      assert.deepEqual((await h.call('GET', '/v1/pets')).json, [a, c]);
      assert.deepEqual((await h.call('GET', '/v1/pets?status=available')).json, [a, c]);
      assert.deepEqual((await h.call('GET', '/v1/pets?limit=1')).json, [a]);
      expectError(await h.call('POST', '/v1/store/orders', { body: { petId: b.id } }), 404, 'not_found');
      expectError(await h.call('DELETE', `/v1/pets/${b.id}`), 404, 'not_found');
      const events = await settledFeed(get(h), 4);
      const deleted = events.at(-1);
      assert.equal(deleted.type, 'pet.deleted');
      assert.deepEqual(deleted.data, b, 'the pet as it was');
      assert.equal(deleted.etag, '"1"');
    });

    test('If-Match: 412 precondition_failed on another version, 400 when malformed, and nothing changes; * and lists', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      assert.equal((await patch(h, pet.id, { name: 'two' }, { 'if-match': '"1"' })).status, 200);
      for (const ifMatch of ['"1"', 'W/"2"', '"1", "3"', '"two"', '""', '']) {
        const stale = await patch(h, pet.id, { name: 'lost' }, { 'if-match': ifMatch });
        const message = expectError(stale, 412, 'precondition_failed');
        assert.match(message, /its ETag is now "2"/, ifMatch);
        expectError(
          await h.call('DELETE', `/v1/pets/${pet.id}`, { headers: { 'if-match': ifMatch } }),
          412,
          'precondition_failed',
        );
      }
      // Neither `*` nor entity tags: 400 naming the rule, before anything is compared; a 412 would say the
      // pet changed when it did not.
      for (const ifMatch of ['2', '*, "2"', '"2', '"2", bad', 'w/"2"', '"2" "3"']) {
        const malformed = `header "If-Match" must be "*" or entity tags in double quotes, such as "2" (got ${ifMatch})`;
        assert.equal(
          expectError(await patch(h, pet.id, { name: 'lost' }, { 'if-match': ifMatch }), 400, 'invalid_request'),
          malformed,
        );
        const removal = await h.call('DELETE', `/v1/pets/${pet.id}`, { headers: { 'if-match': ifMatch } });
        assert.equal(expectError(removal, 400, 'invalid_request'), malformed);
      }
      assert.equal((await h.call('GET', `/v1/pets/${pet.id}`)).json.name, 'two');
      assert.equal((await patch(h, pet.id, { name: 'three' }, { 'if-match': '"1", "2"' })).status, 200);
      assert.equal((await patch(h, pet.id, { name: 'four' }, { 'if-match': '*' })).status, 200);
      assert.equal((await patch(h, pet.id, {}, { 'if-match': '"4"' })).status, 200, 'the empty patch matches too');
      expectError(await patch(h, pet.id, {}, { 'if-match': '"3"' }), 412, 'precondition_failed');
      const [held] = await h.createPets(1);
      await order(h, held.id);
      expectError(await patch(h, held.id, { status: 'sold' }, { 'if-match': '"1"' }), 412, 'precondition_failed');
      expectError(await patch(h, held.id, { status: 'sold' }, { 'if-match': '"2"' }), 409, 'conflict');
      assert.equal((await h.call('DELETE', `/v1/pets/${pet.id}`, { headers: { 'if-match': '"4"' } })).status, 204);
      const types = (await settledFeed(get(h), 8)).map((event) => event.type);
      assert.deepEqual(types.filter((type) => type === 'pet.updated').length, 3, 'refusals recorded nothing');
    });

    test('of 30 concurrent PATCHes with one If-Match on two instances, one is 200 and 29 are 412', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      const [pet] = await h.createPets(1);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          patch(i % 2 === 0 ? h : other, pet.id, { name: `clerk ${i}` }, { 'if-match': '"1"' }),
        ),
      );
      const statuses = results.map((result) => result.status);
      assert.equal(statuses.filter((status) => status === 200).length, 1, statuses.join());
      assert.equal(statuses.filter((status) => status === 412).length, 29, statuses.join());
      const winner = results.find((result) => result.status === 200);
      assertEtag(winner as CallResult, '"2"');
      const read = await h.call('GET', `/v1/pets/${pet.id}`);
      assert.deepEqual(read.json, winner?.json);
      const updated = await settledFeed(get(h), 1, 'type=pet.updated');
      assert.equal(updated.length, 1);
      assert.deepEqual(updated[0].data, winner?.json);
    });

    test('without If-Match the last write wins: 30 concurrent PATCHes all apply, one version each', async (t) => {
      const h = await startHarness(t, backend);
      const [pet] = await h.createPets(1);
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => patch(h, pet.id, { name: `clerk ${i}` })));
      assert.deepEqual(new Set(results.map((result) => result.status)), new Set([200]));
      const etags = results.map((result) => result.headers.get('etag'));
      assert.equal(new Set(etags).size, 30, 'each change has a version of its own');
      assertEtag(await h.call('GET', `/v1/pets/${pet.id}`), '"31"');
      assert.equal((await settledFeed(get(h), 30, 'type=pet.updated')).length, 30);
    });

    test('a status change racing an order placement: one wins, the other 409, the feed agrees', async (t) => {
      const h = await startHarness(t, backend);
      const other = await h.startInstance();
      for (let round = 0; round < 8; round++) {
        const [pet] = await h.createPets(1);
        const [changed, placed] = await Promise.all([
          patch(round % 2 === 0 ? h : other, pet.id, { status: 'sold' }),
          (round % 2 === 0 ? other : h).call('POST', '/v1/store/orders', { body: { petId: pet.id } }),
        ]);
        const statuses = [changed.status, placed.status].sort();
        assert.ok(
          (statuses[0] === 200 && statuses[1] === 409) || (statuses[0] === 201 && statuses[1] === 409),
          `round ${round}: PATCH ${changed.status}, order ${placed.status}`,
        );
        const final = (await h.call('GET', `/v1/pets/${pet.id}`)).json;
        assert.equal(final.status, changed.status === 200 ? 'sold' : 'pending');
      }
      const events = await settledFeed(get(h), 8 * 3);
      const moves = events.filter((event) => event.type === 'pet.status_changed').map((event) => event.data.status);
      const pets = (await h.call('GET', '/v1/pets?limit=100')).json;
      assert.deepEqual(
        moves.sort(),
        pets.map((pet: { status: string }) => pet.status).sort(),
        'each pet moved once, to where it is',
      );
    });

    test('GET answers 304 to a matching If-None-Match, and the Pet once it changed', async (t) => {
      const h = await startHarness(t, backend);
      const once = { body: { name: 'pet-0', categoryId: 1 }, headers: { 'idempotency-key': 'k1' } };
      const pet = (await h.call('POST', '/v1/pets', once)).json;
      const replayed = await h.call('POST', '/v1/pets', once);
      assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
      assertEtag(replayed, '"1"');
      for (const ifNoneMatch of ['"1"', 'W/"1"', '"9", "1"', '*']) {
        const cached = await h.call('GET', `/v1/pets/${pet.id}`, { headers: { 'if-none-match': ifNoneMatch } });
        assert.equal(cached.status, 304, ifNoneMatch);
        assert.equal(cached.text, '');
        assertEtag(cached, '"1"');
      }
      // A malformed field is ignored as a whole, though it names the tag or holds `*`.
      for (const ifNoneMatch of ['"2"', '1', 'W/1', '*, "1"', '"1", bad']) {
        const full = await h.call('GET', `/v1/pets/${pet.id}`, { headers: { 'if-none-match': ifNoneMatch } });
        assert.equal(full.status, 200, ifNoneMatch);
        assert.deepEqual(full.json, pet);
      }
      await patch(h, pet.id, { name: 'new' });
      const changed = await h.call('GET', `/v1/pets/${pet.id}`, { headers: { 'if-none-match': '"1"' } });
      assert.equal(changed.status, 200);
      assertEtag(changed, '"2"');
      assert.equal(changed.json.name, 'new');
    });

    test('pages carry a weak ETag: 304 while unchanged, a new one after any change of a pet on it', async (t) => {
      const h = await startHarness(t, backend);
      const pets = await h.createPets(3);
      const first = await h.call('GET', '/v1/pets?limit=2');
      const etag = first.headers.get('etag') ?? '';
      assert.match(etag, /^W\/"[A-Za-z0-9_-]+"$/);
      const again = await h.call('GET', '/v1/pets?limit=2', { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
      assertEtag(again, etag);
      const other = await h.call('GET', '/v1/pets?limit=3');
      assert.notEqual(other.headers.get('etag'), etag, 'another page, another tag');
      assert.equal((await h.call('GET', '/v1/pets?limit=3', { headers: { 'if-none-match': etag } })).status, 200);
      await h.call('POST', '/v1/pets', { body: { name: 'later', categoryId: 1 } });
      const unchanged = await h.call('GET', '/v1/pets?limit=2', { headers: { 'if-none-match': etag } });
      assert.equal(unchanged.status, 304, 'a pet added after the page leaves it as it was');
      await patch(h, pets[1].id, { categoryId: 2 });
      const changed = await h.call('GET', '/v1/pets?limit=2', { headers: { 'if-none-match': etag } });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.get('etag'), etag);
      assert.equal(changed.json[1].categoryId, 2);
    });

    test('events reach the stream and signed webhooks with their etag, and a receiver writes back', async (t) => {
      const h = await startHarness(t, backend, {
        webhooks: { allowPrivateUrls: true },
        webhookDelivery: { timeoutMs: 1000, retrySchedule: [100] },
      });
      const receiver = await startReceiver(t);
      const endpoint = await h.call('POST', '/v1/webhooks', {
        body: { url: `${receiver.url}/hooks`, events: ['pet.updated', 'pet.deleted'] },
      });
      assert.equal(endpoint.status, 201, endpoint.text);
      const start = /cursor=([^&>]+)/.exec((await h.call('GET', '/v1/events')).headers.get('link') ?? '')?.[1];
      const stream = await openStream(h.url, `/v1/events?cursor=${start}`, { key: h.keys.read });
      assert.ok(isStream(stream));
      t.after(() => stream.close());
      const [pet] = await h.createPets(1);
      await patch(h, pet.id, { name: 'Rex', status: 'sold' });
      await receiver.until((got) => got.length === 1, 5000);
      const delivered = receiver.received[0];
      const event = new Webhook(endpoint.json.secret).verify(delivered?.body ?? '', delivered?.headers ?? {}) as any;
      assert.equal(event.type, 'pet.updated');
      assert.equal(event.etag, '"2"');
      assert.deepEqual(event.previous, { name: pet.name, status: 'available' });
      // The receiver writes back on the version it was told of; a second write on it is refused.
      const writeBack = await patch(h, pet.id, { categoryId: 9 }, { 'if-match': event.etag });
      assert.equal(writeBack.status, 200, writeBack.text);
      expectError(await patch(h, pet.id, { categoryId: 8 }, { 'if-match': event.etag }), 412, 'precondition_failed');
      assert.equal((await h.call('DELETE', `/v1/pets/${pet.id}`)).status, 204);
      await receiver.until((got) => got.length === 3, 5000);
      const types = receiver.received.map((got) => JSON.parse(got.body).type);
      assert.deepEqual(types, ['pet.updated', 'pet.updated', 'pet.deleted']);
      assert.equal(JSON.parse(receiver.received[2]?.body ?? '{}').etag, '"3"');
      const frames = await stream.waitForEvents(5, 5000);
      assert.deepEqual(
        frames.map((frame) => [frame.event, JSON.parse(frame.data ?? '{}').etag]),
        [
          ['pet.created', '"1"'],
          ['pet.updated', '"2"'],
          ['pet.status_changed', '"2"'],
          ['pet.updated', '"3"'],
          ['pet.deleted', '"3"'],
        ],
      );
    });
  });
});
