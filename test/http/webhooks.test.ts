import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_SUBSCRIPTION } from '../../src/domain/event-types.js';
import { expectError } from '../helpers/calls.js';
import { eachBackend } from '../helpers/stores.js';
import { createEndpoint, startWebhookHarness } from '../helpers/webhooks.js';

const FIELDS = [
  'createdAt',
  'description',
  'disabledAt',
  'disabledReason',
  'enabled',
  'events',
  'id',
  'ordering',
  'owner',
  'pausedUntil',
  'previousPublicKey',
  'previousSecretExpiresAt',
  'publicKey',
  'rateLimit',
  'signature',
  'url',
];

eachBackend((backend) => {
  describe(`webhooks [${backend.name}]`, () => {
    test('registering: 201, Location, the secret shown once, the defaults; GET shows it without the secret', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const result = await h.call('POST', '/v1/webhooks', { body: { url: 'https://hooks.example.com/in' } });
      assert.equal(result.status, 201, result.text);
      const created = result.json;
      assert.deepEqual(Object.keys(created).sort(), [...FIELDS, 'secret'].sort());
      assert.equal(result.headers.get('location'), `/v1/webhooks/${created.id}`);
      assert.deepEqual(created.events, [...DEFAULT_SUBSCRIPTION]);
      assert.equal(created.description, null);
      assert.equal(created.enabled, true);
      assert.equal(created.ordering, 'subject', "a subject's events in order, unless asked otherwise");
      assert.deepEqual([created.signature, created.publicKey, created.previousPublicKey], ['hmac', null, null]);
      assert.equal(created.rateLimit, null, 'no rate limit unless asked');
      assert.ok(Math.abs(Date.parse(created.createdAt) - Date.now()) < 60_000);
      const [, base64 = ''] = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(created.secret) ?? [];
      assert.ok(Buffer.from(base64, 'base64').length >= 24, created.secret);
      const { secret: _secret, ...shown } = created;
      const got = await h.call('GET', `/v1/webhooks/${created.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.json, shown);
      assert.doesNotMatch(got.text, /whsec_/);

      const other = await createEndpoint(h, { events: ['order.placed'], description: 'orders to the warehouse' });
      assert.deepEqual(other.events, ['order.placed']);
      assert.equal(other.description, 'orders to the warehouse');
      assert.notEqual(other.secret, created.secret, 'every endpoint has its own secret');

      const { secret: _unordered, ...unordered } = await createEndpoint(h, { ordering: 'none' });
      assert.equal(unordered.ordering, 'none');
      assert.deepEqual((await h.call('GET', `/v1/webhooks/${unordered.id}`)).json, unordered);
      assert.deepEqual(
        (await h.call('GET', '/v1/webhooks')).json.map((endpoint: { ordering: string }) => endpoint.ordering),
        ['subject', 'subject', 'none'],
      );
      for (const rateLimit of [1, 10_000]) {
        const { secret: _limited, ...limited } = await createEndpoint(h, { rateLimit });
        assert.equal(limited.rateLimit, rateLimit);
        assert.deepEqual((await h.call('GET', `/v1/webhooks/${limited.id}`)).json, limited);
      }
      assert.equal((await createEndpoint(h, { rateLimit: null })).rateLimit, null, 'null is none, as left out');
    });

    test('a page of endpoints at a time in id order, without secrets; cursors are signed for this list', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await createEndpoint(h, { description: `n${i}` })).id);
      const seen = [];
      let path: string | undefined = '/v1/webhooks?limit=2';
      while (path !== undefined) {
        const page = await h.call('GET', path);
        assert.equal(page.status, 200);
        assert.ok(page.json.length <= 2);
        for (const endpoint of page.json) assert.deepEqual(Object.keys(endpoint).sort(), FIELDS);
        seen.push(...page.json.map((endpoint: { id: number }) => endpoint.id));
        path = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      }
      assert.deepEqual(seen, ids);
      assert.deepEqual((await h.call('GET', '/v1/webhooks')).json.length, 5);

      await h.createPets(2);
      const petsLink = (await h.call('GET', '/v1/pets?limit=1')).headers.get('link') ?? '';
      const petsCursor = /cursor=([^&>]+)/.exec(petsLink)?.[1];
      assert.ok(petsCursor);
      const borrowed = await h.call('GET', `/v1/webhooks?cursor=${petsCursor}`);
      assert.match(expectError(borrowed, 400, 'invalid_request'), /not a cursor this service issued/);
      expectError(await h.call('GET', '/v1/webhooks?cursor=nonsense'), 400, 'invalid_request');
      expectError(await h.call('GET', '/v1/webhooks?limit=0'), 400, 'invalid_request');
      expectError(await h.call('GET', '/v1/webhooks?status=pending'), 400, 'invalid_request');
    });

    test('PATCH changes each field alone and keeps the others; a new url is checked again', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { secret: _secret, ...endpoint } = await createEndpoint(h, { description: 'first' });
      assert.equal(endpoint.disabledReason, null);
      assert.equal(endpoint.disabledAt, null);
      const patch = (body: unknown) => h.call('PATCH', `/v1/webhooks/${endpoint.id}`, { body });
      let expected = endpoint;
      const before = Date.now();
      for (const change of [
        { url: 'https://other.example.com/hooks?team=7' },
        { events: ['pet.status_changed', 'order.status_changed'] },
        { enabled: false },
        { description: 'second' },
        { description: null },
        { ordering: 'none' },
        { enabled: true, events: ['pet.created'] },
        { ordering: 'subject', description: 'in order again' },
        { rateLimit: 5 },
        { rateLimit: 10_000, description: 'limited' },
        { rateLimit: null },
      ]) {
        const result = await patch(change);
        assert.equal(result.status, 200, result.text);
        expected = { ...expected, ...change };
        // Disabling shows why (a change: manual) and when; enabling clears both.
        if (change.enabled === false) {
          expected = { ...expected, disabledReason: 'manual', disabledAt: result.json.disabledAt };
          const at = Date.parse(result.json.disabledAt);
          assert.ok(at >= before - 1000 && at <= Date.now() + 1000, result.json.disabledAt);
        }
        if (change.enabled === true) expected = { ...expected, disabledReason: null, disabledAt: null };
        assert.deepEqual(result.json, expected, JSON.stringify(change));
        assert.deepEqual((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json, expected);
      }
      assert.match(
        expectError(await patch({ url: 'https://internal.example.com/' }), 400, 'invalid_request'),
        /internal\.example\.com.*10\.0\.0\.7.*private/,
      );
      assert.match(
        expectError(await patch({}), 400, 'invalid_request'),
        /^body must contain at least one of: url, events, enabled, description, ordering, signature, rateLimit$/,
      );
      assert.match(
        expectError(await patch({ ordering: 'fifo' }), 400, 'invalid_request'),
        /^body\.ordering must be one of: subject, none$/,
      );
      assert.match(expectError(await patch({ ordering: null }), 400, 'invalid_request'), /body\.ordering/);
      const badLimits: Array<[unknown, string]> = [
        [0, 'must be >= 1'],
        [-1, 'must be >= 1'],
        [10_001, 'must be <= 10000'],
        [1.5, 'must be an integer'],
        ['5', 'must be an integer'],
        [true, 'must be an integer'],
      ];
      for (const [rateLimit, problem] of badLimits) {
        const message = expectError(await patch({ rateLimit }), 400, 'invalid_request');
        assert.equal(message, `body.rateLimit ${problem}`, JSON.stringify(rateLimit));
      }
      assert.equal((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json.rateLimit, null, 'nothing changed');
      assert.match(expectError(await patch({ secret: 'whsec_x' }), 400, 'invalid_request'), /unknown field "secret"/);
      assert.match(expectError(await patch({ enabled: 'yes' }), 400, 'invalid_request'), /body\.enabled/);
      assert.match(
        expectError(await patch({ events: [] }), 400, 'invalid_request'),
        /body\.events must have at least 1 item/,
      );
      assert.deepEqual((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).json, expected, 'refusals change nothing');
      expectError(await h.call('PATCH', '/v1/webhooks/999', { body: { enabled: false } }), 404, 'not_found');
    });

    test('DELETE: 204, then 404 on every operation; unknown ids are 404', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const kept = await createEndpoint(h);
      const { id } = await createEndpoint(h);
      const deleted = await h.call('DELETE', `/v1/webhooks/${id}`);
      assert.equal(deleted.status, 204);
      assert.equal(deleted.text, '');
      for (const [method, path, body] of [
        ['GET', `/v1/webhooks/${id}`, undefined],
        ['PATCH', `/v1/webhooks/${id}`, { enabled: false }],
        ['DELETE', `/v1/webhooks/${id}`, undefined],
        ['GET', `/v1/webhooks/${id}/deliveries`, undefined],
        ['GET', '/v1/webhooks/0', undefined],
        ['GET', '/v1/webhooks/9007199254740991', undefined],
      ] as const) {
        assert.match(
          expectError(await h.call(method, path, { body }), 404, 'not_found'),
          /webhook endpoint \d+ does not exist/,
        );
      }
      assert.deepEqual(
        (await h.call('GET', '/v1/webhooks')).json.map((endpoint: { id: number }) => endpoint.id),
        [kept.id],
      );
      expectError(await h.call('GET', '/v1/webhooks/abc'), 400, 'invalid_request');
      expectError(await h.call('PUT', `/v1/webhooks/${kept.id}`), 405, 'method_not_allowed');
    });

    test('bad bodies are 400 naming the field, and nothing is written', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const url = 'https://hooks.example.com/in';
      const cases: Array<[unknown, RegExp]> = [
        [{}, /body\.url is required/],
        [{ url: 42 }, /body\.url/],
        [{ url: '' }, /body\.url must have at least 1 character$/],
        [{ url: `https://hooks.example.com/${'a'.repeat(2048)}` }, /body\.url must have at most 2048 characters/],
        [{ url, events: ['pet.removed'] }, /body\.events\.0 must be one of: pet\.created/],
        [{ url, events: [] }, /body\.events must have at least 1 item$/],
        [{ url, events: ['pet.created', 'pet.created'] }, /body\.events lists "pet\.created" more than once/],
        [{ url, events: 'pet.created' }, /body\.events must be of type array/],
        [{ url, description: 'x'.repeat(501) }, /body\.description must have at most 500 characters/],
        [{ url, ordering: 'fifo' }, /^body\.ordering must be one of: subject, none$/],
        [{ url, ordering: 'Subject' }, /^body\.ordering must be one of: subject, none$/],
        [{ url, ordering: 1 }, /body\.ordering/],
        [{ url, rateLimit: 0 }, /^body\.rateLimit must be >= 1$/],
        [{ url, rateLimit: 10_001 }, /^body\.rateLimit must be <= 10000$/],
        [{ url, rateLimit: 1.5 }, /^body\.rateLimit must be an integer$/],
        [{ url, rateLimit: '5' }, /^body\.rateLimit must be an integer$/],
        [{ url, enabled: false }, /unknown field "enabled"/],
        [{ url, id: 7 }, /body\.id must not be sent/],
      ];
      for (const [body, message] of cases) {
        assert.match(expectError(await h.call('POST', '/v1/webhooks', { body }), 400, 'invalid_request'), message);
      }
      assert.deepEqual((await h.call('GET', '/v1/webhooks')).json, []);
    });

    test('URLs that are not https:// or not public are 400 naming why, and nothing is written', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const cases: Array<[string, RegExp]> = [
        ['not a url', /must be an absolute URL/],
        ['hooks.example.com/in', /must be an absolute URL/],
        [
          'http://hooks.example.com/in',
          /must be an https:\/\/ URL \(http:\/\/ too with WEBHOOK_ALLOW_PRIVATE_URLS=true, set by/,
        ],
        ['ftp://hooks.example.com/in', /must be an https:\/\/ URL/],
        ['https://user:secret@hooks.example.com/in', /must not contain a user name or password/],
        ['https://hooks.example.com/in#top', /must not contain a fragment/],
        [
          'https://127.0.0.1/in',
          /points to 127\.0\.0\.1, which is not a public address \(loopback\); .*WEBHOOK_ALLOW_PRIVATE_URLS=true/,
        ],
        ['https://10.0.0.1/in', /points to 10\.0\.0\.1, .*\(private\)/],
        ['https://[::1]/in', /points to ::1, .*\(loopback\)/],
        ['https://169.254.169.254/latest/meta-data/', /points to 169\.254\.169\.254, .*\(link-local\)/],
        ['https://[::ffff:127.0.0.1]/in', /\(loopback: IPv4-mapped 127\.0\.0\.1\)/],
        ['https://localhost:8443/in', /host "localhost" is not a public host name; .*WEBHOOK_ALLOW_PRIVATE_URLS=true/],
        ['https://internal.example.com/in', /host "internal\.example\.com" resolves to 10\.0\.0\.7, .*\(private\)/],
        ['https://metadata.example.com/in', /resolves to 169\.254\.169\.254, .*\(link-local\)/],
        ['https://nowhere.example.com/in', /host "nowhere\.example\.com" does not resolve \(ENOTFOUND\)/],
      ];
      for (const [url, message] of cases) {
        const result = await h.call('POST', '/v1/webhooks', { body: { url } });
        assert.match(expectError(result, 400, 'invalid_request'), message, url);
      }
      assert.deepEqual((await h.call('GET', '/v1/webhooks')).json, []);
    });

    test('WEBHOOK_ALLOW_PRIVATE_URLS: http:// and private addresses are accepted; the rest is still refused', async (t) => {
      const h = await startWebhookHarness(t, backend, true);
      for (const url of ['http://127.0.0.1:9000/hook', 'https://10.0.0.1/', 'http://localhost/', 'http://receiver/']) {
        const result = await h.call('POST', '/v1/webhooks', { body: { url } });
        assert.equal(result.status, 201, `${url}: ${result.text}`);
      }
      const refused = await h.call('POST', '/v1/webhooks', { body: { url: 'http://u:p@127.0.0.1/' } });
      expectError(refused, 400, 'invalid_request');
    });

    test('every operation needs the webhooks scope: 403 with a read or write key alone, 401 without a key', async (t) => {
      const h = await startWebhookHarness(t, backend);
      const { id } = await createEndpoint(h);
      const operations = [
        ['POST', '/v1/webhooks', { url: 'https://hooks.example.com/' }],
        ['GET', '/v1/webhooks', undefined],
        ['GET', `/v1/webhooks/${id}`, undefined],
        ['PATCH', `/v1/webhooks/${id}`, { enabled: false }],
        ['DELETE', `/v1/webhooks/${id}`, undefined],
        ['GET', `/v1/webhooks/${id}/deliveries`, undefined],
      ] as const;
      for (const [method, path, body] of operations) {
        expectError(await h.call(method, path, { body, key: h.keys.read }), 403, 'forbidden');
        const refused = expectError(await h.call(method, path, { body, key: h.keys.write }), 403, 'forbidden');
        assert.match(refused, /"webhooks" scope/);
        expectError(await h.call(method, path, { body, key: null }), 401, 'unauthorized');
      }
      assert.equal((await h.call('GET', `/v1/webhooks/${id}`)).json.enabled, true);
      assert.equal((await h.call('GET', '/v1/webhooks')).json.length, 1);
    });
  });
});
