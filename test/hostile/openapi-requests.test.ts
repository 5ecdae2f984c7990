import { test } from 'node:test';
import fc from 'fast-check';
import { operationRequest } from './operation-requests.js';
import type { HostileRequest } from './requests.js';
import { runs, SEED } from './settings.js';
import { hostileSuite, property } from './world.js';

/** Every operation of the OpenAPI document, with mutated paths, queries, headers and bodies; then the run's totals. */
hostileSuite(({ backend, world, totals }) => {
  test('requests derived from the OpenAPI document, mutated', async (t) => {
    const w = await world(t);
    const requests = fc.oneof(...w.operations.map((operation) => operationRequest(w, operation)));
    // Some requests are sent again in the same batch, as a client retrying would (Idempotency-Key replays).
    const batch = fc
      .tuple(fc.array(requests, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 2 }))
      .map(([sent, retries]) => [...sent, ...retries.map((i) => sent[i % sent.length] as HostileRequest)]);
    await property(t, w, 1, runs(600), batch);
  });

  test('requests per run', (t) => {
    t.diagnostic(
      `${backend.name}: ${totals.generated} generated requests in this file's tests (${totals.total} HTTP requests with the checks), seed ${SEED}`,
    );
  });
});
