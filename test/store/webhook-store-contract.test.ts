import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { CLI_AUDIT } from '../../src/domain/audit.js';
import type { DueDelivery } from '../../src/store/records.js';
import type { NewWebhookEndpointRecord } from '../../src/store/webhook-endpoint-records.js';
import { claimEverything, claimQuery } from '../helpers/claims.js';
import { addEndpoint } from '../helpers/endpoint-records.js';
import { eachBackend } from '../helpers/stores.js';

const endpoint = (overrides: Partial<NewWebhookEndpointRecord> = {}): NewWebhookEndpointRecord => ({
  owner: 'default',
  url: 'https://hooks.example.com/in',
  events: ['order.placed', 'pet.created'],
  description: null,
  ordering: 'subject',
  rateLimit: null,
  secret: 'whsec_c2VjcmV0',
  publicKey: null,
  createdAt: new Date('2026-01-02T03:04:05.678Z'),
  ...overrides,
});

eachBackend((backend) => {
  describe(`webhook store contract [${backend.name}]`, () => {
    async function fresh(t: TestContext) {
      const fixture = await backend.create();
      t.after(() => fixture.dispose());
      return fixture;
    }

    test('create keeps every field as given, enabled; get and list return it', async (t) => {
      const { store } = await fresh(t);
      const created = await addEndpoint(store, endpoint({ description: 'Ünïcode 🐈' }));
      const fields = endpoint({ description: 'Ünïcode 🐈' });
      const health = { disabledReason: null, disabledAt: null, pausedUntil: null };
      const previous = { previousSecret: null, previousPublicKey: null };
      assert.deepEqual(created, { id: created.id, enabled: true, ...previous, ...health, ...fields });
      assert.deepEqual(await store.webhooks.get(created.id), created);
      assert.equal(await store.webhooks.get(created.id + 1), undefined);
      const more = [
        await addEndpoint(store, endpoint({ ordering: 'none', rateLimit: 1 })),
        await addEndpoint(store, endpoint()),
      ];
      assert.deepEqual(
        more.map((record) => [record.ordering, record.rateLimit]),
        [
          ['none', 1],
          ['subject', null],
        ],
      );
      assert.deepEqual(await store.webhooks.get(more[0]?.id ?? 0), more[0]);
      assert.deepEqual(await store.webhooks.list({ limit: 10 }), [created, ...more]);
      assert.deepEqual(await store.webhooks.list({ limit: 1, afterId: created.id }), [more[0]]);
    });

    test('update changes only what it is given; description null clears it; unknown ids are undefined', async (t) => {
      const { store } = await fresh(t);
      const { id } = await addEndpoint(store, endpoint({ description: 'kept' }));
      const before = Date.now();
      const disabled = await store.webhooks.update(id, { enabled: false }, CLI_AUDIT);
      const disabledAt = disabled?.disabledAt ?? new Date(0);
      assert.ok(disabledAt.getTime() >= before - 1000 && disabledAt.getTime() <= Date.now() + 1000);
      assert.deepEqual(disabled, {
        id,
        enabled: false,
        previousSecret: null,
        previousPublicKey: null,
        disabledReason: 'manual',
        disabledAt,
        pausedUntil: null,
        ...endpoint({ description: 'kept' }),
      });
      assert.deepEqual(
        await store.webhooks.update(id, { enabled: false }, CLI_AUDIT),
        disabled,
        'disabled once, at first',
      );
      const moved = await store.webhooks.update(
        id,
        { url: 'https://other.example.com/', events: ['pet.created'] },
        CLI_AUDIT,
      );
      assert.deepEqual(moved, { ...disabled, url: 'https://other.example.com/', events: ['pet.created'] });
      assert.equal((await store.webhooks.update(id, { description: undefined }, CLI_AUDIT))?.description, 'kept');
      assert.equal((await store.webhooks.update(id, { description: null }, CLI_AUDIT))?.description, null);
      const unordered = await store.webhooks.update(id, { ordering: 'none' }, CLI_AUDIT);
      assert.deepEqual(unordered, { ...moved, description: null, ordering: 'none' });
      assert.deepEqual(await store.webhooks.get(id), unordered);
      assert.equal(
        (await store.webhooks.update(id, { description: 'kept', ordering: undefined }, CLI_AUDIT))?.ordering,
        'none',
      );
      assert.equal((await store.webhooks.update(id, { ordering: 'subject' }, CLI_AUDIT))?.ordering, 'subject');
      const limited = await store.webhooks.update(id, { rateLimit: 10_000 }, CLI_AUDIT);
      assert.deepEqual(limited, { ...unordered, description: 'kept', ordering: 'subject', rateLimit: 10_000 });
      assert.equal(
        (await store.webhooks.update(id, { rateLimit: undefined, ordering: 'subject' }, CLI_AUDIT))?.rateLimit,
        10_000,
      );
      assert.equal(
        (await store.webhooks.update(id, { rateLimit: null }, CLI_AUDIT))?.rateLimit,
        null,
        'null clears it',
      );
      const enabled = await store.webhooks.update(id, { enabled: true }, CLI_AUDIT);
      assert.deepEqual([enabled?.enabled, enabled?.disabledReason, enabled?.disabledAt], [true, null, null]);
      assert.equal(await store.webhooks.update(id + 1, { enabled: true }, CLI_AUDIT), undefined);
    });

    test('rotateSecret: the replaced secret signs until its expiry, an older one is dropped', async (t) => {
      const { store } = await fresh(t);
      const created = await addEndpoint(store, endpoint({ events: ['pet.created'] }));
      const { id } = created;
      const until = new Date('2026-01-03T03:04:05.678Z');
      const first = await store.webhooks.rotateSecret(
        id,
        {
          secret: 'whsec_Zmlyc3Q=',
          publicKey: null,
          previousExpiresAt: until,
        },
        CLI_AUDIT,
      );
      assert.deepEqual(first, {
        ...created,
        secret: 'whsec_Zmlyc3Q=',
        previousSecret: { secret: created.secret, expiresAt: until },
      });
      assert.deepEqual(await store.webhooks.get(id), first);
      // Inside the window: the secret it replaces becomes the previous one, the older is gone.
      const later = new Date('2026-01-04T00:00:00.000Z');
      const second = await store.webhooks.rotateSecret(
        id,
        {
          secret: 'whsec_c2Vjb25k',
          publicKey: null,
          previousExpiresAt: later,
        },
        CLI_AUDIT,
      );
      assert.deepEqual(second?.previousSecret, { secret: 'whsec_Zmlyc3Q=', expiresAt: later });
      await store.pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
      const [delivery] = await claimEverything(store);
      assert.deepEqual(delivery?.endpoint, {
        id,
        owner: 'default',
        url: created.url,
        rateLimit: null,
        secret: 'whsec_c2Vjb25k',
        previousSecret: { secret: 'whsec_Zmlyc3Q=', expiresAt: later },
      });
      // As an attempt about to be sent reads them, for many endpoints at once; a gone one is absent.
      const now = await store.deliveries.signingSecrets([id, id + 1000]);
      assert.deepEqual(
        [...now],
        [[id, { secret: 'whsec_c2Vjb25k', previousSecret: { secret: 'whsec_Zmlyc3Q=', expiresAt: later } }]],
      );
      // No overlap: the replaced secret stops at once.
      const third = await store.webhooks.rotateSecret(
        id,
        {
          secret: 'whsec_dGhpcmQ=',
          publicKey: null,
          previousExpiresAt: null,
        },
        CLI_AUDIT,
      );
      assert.deepEqual(third, { ...created, secret: 'whsec_dGhpcmQ=', previousSecret: null });
      assert.equal(
        await store.webhooks.rotateSecret(
          id + 1,
          { secret: 'whsec_eA==', publicKey: null, previousExpiresAt: null },
          CLI_AUDIT,
        ),
        undefined,
      );
    });

    test('public keys: kept with an Ed25519 secret, replaced with it by rotations and changes of kind', async (t) => {
      const { store } = await fresh(t);
      const created = await addEndpoint(store, endpoint({ secret: 'whsk_YQ==', publicKey: 'whpk_QQ==' }));
      const { id } = created;
      assert.deepEqual(
        [created.secret, created.publicKey, created.previousPublicKey],
        ['whsk_YQ==', 'whpk_QQ==', null],
      );
      assert.deepEqual(await store.webhooks.get(id), created);
      const until = new Date('2026-01-03T03:04:05.678Z');
      // A change to the kind it has changes nothing.
      const same = { secret: 'whsk_Yg==', publicKey: 'whpk_Qg==', previousExpiresAt: until };
      assert.deepEqual(await store.webhooks.update(id, { signingKey: same }, CLI_AUDIT), created);
      // To the other kind: a rotation, with the rest of the change.
      const hmac = { secret: 'whsec_Yw==', publicKey: null, previousExpiresAt: until };
      const switched = await store.webhooks.update(id, { description: 'now HMAC', signingKey: hmac }, CLI_AUDIT);
      const previousSecret = { secret: 'whsk_YQ==', expiresAt: until };
      assert.deepEqual(switched, {
        ...created,
        description: 'now HMAC',
        secret: 'whsec_Yw==',
        publicKey: null,
        previousSecret,
        previousPublicKey: 'whpk_QQ==',
      });
      assert.deepEqual(await store.webhooks.get(id), switched);
      assert.deepEqual(
        [...(await store.deliveries.signingSecrets([id]))],
        [[id, { secret: 'whsec_Yw==', previousSecret }]],
      );
      assert.deepEqual(
        await store.webhooks.update(id, { signingKey: { ...hmac, secret: 'whsec_ZA==' } }, CLI_AUDIT),
        switched,
      );
      // A rotation to Ed25519 leaves the HMAC secret previous, with no public key.
      const later = new Date('2026-01-04T00:00:00.000Z');
      const rotated = await store.webhooks.rotateSecret(
        id,
        {
          secret: 'whsk_ZQ==',
          publicKey: 'whpk_RQ==',
          previousExpiresAt: later,
        },
        CLI_AUDIT,
      );
      assert.deepEqual(
        [rotated?.publicKey, rotated?.previousSecret, rotated?.previousPublicKey],
        ['whpk_RQ==', { secret: 'whsec_Yw==', expiresAt: later }, null],
      );
      const alone = await store.webhooks.rotateSecret(
        id,
        {
          secret: 'whsk_Zg==',
          publicKey: 'whpk_Rg==',
          previousExpiresAt: null,
        },
        CLI_AUDIT,
      );
      assert.deepEqual(
        [alone?.secret, alone?.publicKey, alone?.previousSecret, alone?.previousPublicKey],
        ['whsk_Zg==', 'whpk_Rg==', null, null],
      );
    });

    test('only enabled endpoints subscribed to a type get its deliveries; remove takes them along', async (t) => {
      const fixture = await fresh(t);
      const { store } = fixture;
      const subscribed = await addEndpoint(store, endpoint({ events: ['pet.created'] }));
      const elsewhere = await addEndpoint(store, endpoint({ events: ['order.placed'] }));
      const disabled = await addEndpoint(store, endpoint({ events: ['pet.created'] }));
      await store.webhooks.update(disabled.id, { enabled: false }, CLI_AUDIT);
      await store.pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
      assert.deepEqual(
        (await claimEverything(store)).map((delivery) => delivery.endpoint.id),
        [subscribed.id],
      );
      assert.equal(await store.webhooks.remove(subscribed.id, CLI_AUDIT), true);
      assert.deepEqual(await fixture.sql('SELECT endpoint_id FROM webhook_deliveries'), []);
      assert.equal(await store.webhooks.remove(subscribed.id, CLI_AUDIT), false);
      assert.deepEqual(
        (await store.webhooks.list({ limit: 10 })).map((record) => record.id),
        [elsewhere.id, disabled.id],
      );
      assert.deepEqual(await store.webhooks.attempts(subscribed.id, { limit: 10 }), []);
    });

    test('a claim passes over events of types no endpoint takes many at a time, not its limit at a time', async (t) => {
      const { store } = await fresh(t);
      const orders = await addEndpoint(store, endpoint({ events: ['order.placed'] }));
      const pets = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          store.pets.create({ name: `p${i}`, categoryId: 1, status: 'available' }),
        ),
      );
      await store.orders.place({ petId: pets[0]?.id as number, quantity: 1, createdAt: new Date() });
      // A step reads QUEUE_PER_STEP × READ_PER_QUEUED events on (4,096 for one endpoint): the order's
      // delivery comes with the first claim (the 4th, were one event read per delivery queued).
      let claims = 0;
      let sent: DueDelivery[] = [];
      while (sent.length === 0 && claims < 200) {
        sent = await store.deliveries.claim(claimQuery(new Date(Date.now() + 60_000), { limit: 10 }));
        claims += 1;
      }
      assert.deepEqual(
        sent.map(({ endpoint, event }) => [endpoint.id, event.type]),
        [[orders.id, 'order.placed']],
      );
      assert.equal(claims, 1);
    });

    test('a subscription change holds from then on: what was recorded before goes out as subscribed then', async (t) => {
      const { store } = await fresh(t);
      const pet = async () => (await store.pets.create({ name: 'Rex', categoryId: 1, status: 'available' })).id;
      const paused = await addEndpoint(store, endpoint({ events: ['pet.created'] }));
      const switched = await addEndpoint(store, endpoint({ events: ['pet.created'] }));
      const before = await pet();
      await store.webhooks.update(paused.id, { enabled: false }, CLI_AUDIT);
      await store.webhooks.update(switched.id, { events: ['order.placed'] }, CLI_AUDIT);
      const meanwhile = await pet();
      await store.webhooks.update(paused.id, { enabled: true }, CLI_AUDIT);
      await store.webhooks.update(switched.id, { events: ['pet.created'], description: 'back' }, CLI_AUDIT);
      const after = await pet();
      const late = await addEndpoint(store, endpoint({ events: ['pet.created'] }));
      assert.deepEqual(
        (await claimEverything(store)).map(({ endpoint, event }) => [
          endpoint.id,
          event.type === 'pet.created' && event.pet.id,
        ]),
        [
          [paused.id, before],
          [paused.id, after],
          [switched.id, before],
          [switched.id, after],
        ],
        `not ${meanwhile} (recorded while one was disabled and the other subscribed elsewhere), nothing to ${late.id}`,
      );
    });
  });
});
