import { test } from 'node:test';
import fc from 'fast-check';
import { rawRequest } from './raw-requests.js';
import { described, type HostileRequest } from './requests.js';
import { runs } from './settings.js';
import { hostileSuite, property } from './world.js';

/** HTTP/1.1 that fetch will not send, over a raw socket: bad header bytes, huge headers, framing, no Host. */
hostileSuite(({ world }) => {
  test('raw HTTP/1.1: malformed and huge headers, framing, odd targets and methods', async (t) => {
    const w = await world(t);
    await property(t, w, 3, runs(350), fc.array(rawRequest(w), { minLength: 1, maxLength: 3 }));
  });

  test('a request without Host gets the Error body too', async (t) => {
    const w = await world(t);
    const request = described<HostileRequest>({
      method: 'GET',
      target: '/v1/pets',
      headers: [
        ['Authorization', `Bearer ${w.h.keys.all}`],
        ['Connection', 'close'],
      ],
      raw: true,
      protocolValid: false,
      noHost: true,
    });
    await property(t, w, 6, 1, fc.constant([request]), { endOnFailure: true });
  });
});
