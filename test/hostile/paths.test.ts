import { test } from 'node:test';
import fc from 'fast-check';
import { described, type HostileRequest } from './requests.js';
import { runs } from './settings.js';
import { hostileSuite, property } from './world.js';

/** Invalid UTF-8 or malformed escapes in a path segment: Fastify answers before routing (FST_ERR_BAD_URL). */
const BAD_UTF8_SEGMENTS = [
  '%ff',
  '%c0%af',
  '%80',
  '%ed%a0%80',
  '%e2%82',
  '%C0%80',
  '%fe%ff',
  '1%ff',
  '%',
  '%%',
  '%zz',
  '%u0031',
];

hostileSuite(({ world }) => {
  // A URL that does not decode names no operation: 400 before authentication, like malformed HTTP.
  test('a path segment with invalid UTF-8 or a malformed %-escape gets a 400 Error body', async (t) => {
    const w = await world(t);
    const templates = [...w.operations.filter((o) => o.pathParameters.length > 0), undefined];
    const requests = fc
      .tuple(fc.constantFrom(...templates), fc.constantFrom(...BAD_UTF8_SEGMENTS), fc.boolean())
      .map(([operation, bad, authed]) =>
        described<HostileRequest>({
          method: operation?.method ?? 'GET',
          target: operation === undefined ? `/v1/openapi.json/${bad}` : operation.template.replace(/\{[^}]+\}/, bad),
          headers: authed ? [['Authorization', `Bearer ${w.h.keys.all}`]] : [],
          raw: false,
          protocolValid: true,
          expect: 400,
        }),
      );
    await property(t, w, 4, runs(20), fc.array(requests, { minLength: 1, maxLength: 2 }), { endOnFailure: true });
  });

  test('a path parameter over 100 characters gets the Error body, and 401 without a key', async (t) => {
    const w = await world(t);
    const templates = w.operations.filter((o) => o.pathParameters.length > 0);
    const requests = fc
      .tuple(
        fc.constantFrom(...templates),
        fc.integer({ min: 101, max: 2000 }),
        fc.constantFrom('1', '%31', 'a'),
        fc.boolean(),
      )
      .map(([operation, length, unit, authed]) =>
        described<HostileRequest>({
          method: operation.method,
          target: operation.template.replace(/\{[^}]+\}/, unit.repeat(Math.ceil(length / unit.length))),
          headers: authed ? [['Authorization', `Bearer ${w.h.keys.all}`]] : [],
          ...(operation.method === 'PATCH' ? { body: Buffer.from('{"status":"approved"}') } : {}),
          raw: false,
          protocolValid: true,
          ...(authed ? {} : { expect: 401 }),
        }),
      );
    await property(t, w, 5, runs(20), fc.array(requests, { minLength: 1, maxLength: 2 }), { endOnFailure: true });
  });
});
