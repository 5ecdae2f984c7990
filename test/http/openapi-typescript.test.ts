import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { startHarness } from '../helpers/harness.js';
import { BACKENDS, type StoreBackend } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * A consumer generating its types with openapi-typescript, default options, from the served document: the
 * request bodies must accept what the service accepts (fields with a default may be left out), and the
 * responses must still promise every field.
 */

const CONSUMER = `import type { components, paths } from './api.js';

type Schemas = components['schemas'];
type JsonBody<P extends keyof paths, M extends 'post' | 'patch'> = NonNullable<
  paths[P][M] extends { requestBody?: infer B } ? B : never
> extends { content: { 'application/json': infer T } } ? T : never;

// What the service defaults (status, quantity, events) may be left out.
export const pet: Schemas['NewPet'] = { name: 'Rex', categoryId: 1 };
export const order: Schemas['NewOrder'] = { petId: 1 };
export const hook: Schemas['NewWebhookEndpoint'] = { url: 'https://hooks.example.com/petstore' };
// The same through the operations, as openapi-fetch types \`client.POST('/pets', { body })\`.
export const posted: JsonBody<'/pets', 'post'> = { name: 'Rex', categoryId: 1 };
export const placed: JsonBody<'/store/orders', 'post'> = { petId: 1 };
export const registered: JsonBody<'/webhooks', 'post'> = { url: 'https://hooks.example.com/petstore' };

// A change sends what changes (a merge patch), with the ETag it read as If-Match.
export const patched: JsonBody<'/pets/{petId}', 'patch'> = { name: 'Rex' };
export const nothing: Schemas['PetChange'] = {};
export const ifMatch: NonNullable<paths['/pets/{petId}']['patch']['parameters']['header']> = { 'if-match': '"2"' };
export const removal: paths['/pets/{petId}']['delete']['parameters']['path'] = { petId: 1 };
// @ts-expect-error the service assigns id: a change cannot send it
export const renumbered: Schemas['PetChange'] = { id: 2 };

// Responses still carry every field: these must not compile.
// @ts-expect-error a Pet always has a status
export const shown: Schemas['Pet'] = { id: 1, name: 'Rex', categoryId: 1 };
// @ts-expect-error an Order always has a quantity
export const kept: Schemas['Order'] = { id: 1, petId: 1, status: 'placed', createdAt: '', complete: false };
// @ts-expect-error name is still required on create
export const nameless: Schemas['NewPet'] = { categoryId: 1 };
`;

test('openapi-typescript (default options) types the served document as the service accepts it', async (t) => {
  const h = await startHarness(t, BACKENDS.find((backend) => backend.name === 'sqlite') as StoreBackend);
  const served = await h.call('GET', '/v1/openapi.json', { key: null });
  assert.equal(served.status, 200);

  const dir = tempDir(t);
  writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(served.json)));
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
  const program = ts.createProgram([join(dir, 'consumer.ts')], {
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
  });
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
  assert.deepEqual(problems, []);
});
