import { test } from 'node:test';
import fc from 'fast-check';
import { BODY_SIZES, bodyText, mutate, mutation, sized, validJson } from './body-generators.js';
import { CONTENT_TYPES } from './header-generators.js';
import { deepNesting, hostileValue, jsonText } from './json-generators.js';
import { buildRequest } from './operation-requests.js';
import { described, type HostileRequest } from './requests.js';
import { runs } from './settings.js';
import { hostileSuite, property } from './world.js';

/** Request bodies: hostile JSON on every operation that takes one, and bytes that are not UTF-8. */
hostileSuite(({ world }) => {
  test('hostile JSON bodies: nesting, size, prototype keys, surrogates, control characters, int64 literals', async (t) => {
    const w = await world(t);
    const withBody = w.operations.filter((operation) => operation.body !== undefined);
    const requests = fc.oneof(
      ...withBody.map((operation) =>
        fc
          .record({
            segments: fc.tuple(...operation.pathParameters.map(() => fc.integer({ min: 1, max: 4 }).map(String))),
            body: fc.oneof(
              bodyText(w.doc, operation.body ?? {}),
              fc
                .tuple(validJson(w.doc, operation.body ?? {}), fc.array(mutation, { minLength: 1, maxLength: 6 }))
                .map(([json, m]) => jsonText(mutate(json, m))),
              deepNesting.map(jsonText),
              fc.tuple(hostileValue, BODY_SIZES).map(([json, size]) => sized(jsonText(json), size, false)),
            ),
            contentType: fc.constantFrom(...CONTENT_TYPES.filter((choice) => choice.json === true)),
            raw: fc.boolean(),
          })
          .map((parts) =>
            buildRequest(operation, {
              ...parts,
              method: operation.method,
              query: '',
              auth: { header: `Bearer ${w.h.keys.all}`, scopes: ['read', 'write', 'webhooks'] },
            }),
          ),
      ),
    );
    await property(t, w, 2, runs(400), fc.array(requests, { minLength: 1, maxLength: 4 }));
  });

  // A declared charset other than UTF-8 is an unsupported media type (415); undecodable UTF-8 is 400.
  test('a body that is not UTF-8 is refused, not stored with U+FFFD', async (t) => {
    const w = await world(t);
    const badBytes = fc.constantFrom(
      [0xe9],
      [0xff, 0xfe],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf8, 0x88, 0x80, 0x80, 0x80],
      [0x80],
    );
    const requests = fc
      .tuple(badBytes, fc.constantFrom('application/json', 'application/json; charset=latin1'))
      .map(([bytes, type]) =>
        described<HostileRequest>({
          method: 'POST',
          target: '/v1/pets',
          headers: [
            ['Authorization', `Bearer ${w.h.keys.all}`],
            ['Content-Type', type],
          ],
          body: Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from(bytes), Buffer.from('","categoryId":1}')]),
          raw: false,
          protocolValid: true,
          expect: type.includes('latin1') ? 415 : 400,
        }),
      );
    await property(t, w, 7, runs(10), fc.array(requests, { minLength: 1, maxLength: 1 }), { endOnFailure: true });
  });
});
