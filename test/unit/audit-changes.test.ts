import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changedFields, endpointChangeAction, portalLinkReference } from '../../src/domain/audit.js';

test('changedFields: each field whose JSON differs, before and after, in the order first seen', () => {
  const at = new Date('2026-11-28T10:00:00.000Z');
  const before = { url: 'https://a.example/', events: ['pet.created'], enabled: true, disabledAt: null };
  const after = { url: 'https://b.example/', events: ['pet.created'], enabled: false, disabledAt: at, rateLimit: 5 };
  assert.deepEqual(changedFields(before, after), {
    url: { before: 'https://a.example/', after: 'https://b.example/' },
    enabled: { before: true, after: false },
    disabledAt: { before: null, after: '2026-11-28T10:00:00.000Z' },
    // A field one side lacks (added to what an endpoint shows) is null there.
    rateLimit: { before: null, after: 5 },
  });
  assert.equal(changedFields(before, { ...before, events: ['pet.created'] }), undefined, 'nothing changed');
});

test('changedFields never records a secret, a private key or a hash, whatever it is given', () => {
  const changes = changedFields(
    { secret: 'whsec_a', previousSecret: null, privateKey: 'k1', hash: 'h1', publicKey: 'whpk_1' },
    { secret: 'whsec_b', previousSecret: 'whsec_a', privateKey: 'k2', hash: 'h2', publicKey: 'whpk_2' },
  );
  assert.deepEqual(changes, { publicKey: { before: 'whpk_1', after: 'whpk_2' } });
});

test('a change that moved `enabled` is an enabling or a disabling; any other an update', () => {
  assert.equal(endpointChangeAction({ enabled: { before: true, after: false } }), 'webhook_endpoint.disabled');
  assert.equal(endpointChangeAction({ enabled: { before: false, after: true } }), 'webhook_endpoint.enabled');
  assert.equal(endpointChangeAction({ url: { before: 'a', after: 'b' } }), 'webhook_endpoint.updated');
});

test('a portal link is named by a digest of its nonce: the same for the same link, nothing of the nonce', () => {
  const nonce = 'n0nce-of-the-link-123456';
  assert.equal(portalLinkReference(nonce), portalLinkReference(nonce));
  assert.notEqual(portalLinkReference(nonce), portalLinkReference(`${nonce}x`));
  assert.match(portalLinkReference(nonce), /^[A-Za-z0-9_-]{16}$/);
  assert.ok(!nonce.includes(portalLinkReference(nonce)));
});
