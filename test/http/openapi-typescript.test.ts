import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { type Harness, startHarness } from '../helpers/harness.js';
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

/**
 * A consumer calling the service with openapi-fetch's client, typed by the same generated paths: it creates an
 * animal, reads its ETag, corrects it with a merge patch under If-Match, tries again with the now stale tag,
 * lists and removes it. Wrong calls must not compile (not an extra field, such as id in a change: openapi-fetch
 * infers a call's options, so excess properties go unchecked; CONSUMER checks that). It imports openapi-fetch
 * from the project's packages.
 */
const FETCH_CONSUMER = `import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './api.js';

export async function correctAndRemove(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${key}\` } });
  const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
  if (created.data === undefined) throw new Error(JSON.stringify(created.error));
  const petId = created.data.id;
  const read = await client.GET('/pets/{petId}', { params: { path: { petId } } });
  const etag = read.response.headers.get('etag') ?? '';
  const change = {
    params: { path: { petId }, header: { 'if-match': etag } },
    headers: { 'content-type': 'application/merge-patch+json' },
  };
  const changed = await client.PATCH('/pets/{petId}', { ...change, body: { name: 'Rexa' } });
  const stale = await client.PATCH('/pets/{petId}', { ...change, body: { status: 'sold' } });
  const listed = await client.GET('/pets', { params: { query: { limit: 5 } } });
  const removed = await client.DELETE('/pets/{petId}', { params: { path: { petId } } });
  const gone = await client.GET('/pets/{petId}', { params: { path: { petId } } });
  return {
    read: read.data?.name,
    changed: [changed.response.status, changed.data?.name],
    retagged: changed.response.headers.get('etag') !== etag,
    stale: [stale.response.status, stale.error?.code],
    listed: listed.data?.map((pet) => pet.name),
    removed: removed.response.status,
    gone: gone.error?.code,
  };
}

export function mistakes(client: Client<paths>) {
  // @ts-expect-error a status is one the service knows
  void client.PATCH('/pets/{petId}', { params: { path: { petId: 1 } }, body: { status: 'lost' } });
  // @ts-expect-error the animal to remove is named in the path
  void client.DELETE('/pets/{petId}', { params: {} });
  // @ts-expect-error If-Match is a string, the ETag as read
  void client.DELETE('/pets/{petId}', { params: { path: { petId: 1 }, header: { 'if-match': 2 } } });
  // @ts-expect-error name is required on create
  void client.POST('/pets', { body: { categoryId: 1 } });
}
`;

/**
 * Writes the types openapi-typescript generates, default options, from the document served by a new harness;
 * returns the harness and the document's server URL.
 */
async function generate(t: TestContext, dir: string): Promise<{ h: Harness; server: string }> {
  const h = await startHarness(t, BACKENDS.find((backend) => backend.name === 'sqlite') as StoreBackend);
  const served = await h.call('GET', '/v1/openapi.json', { key: null });
  assert.equal(served.status, 200);
  writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(served.json)));
  return { h, server: served.json.servers[0].url };
}

/** What tsc --strict (and exactOptionalPropertyTypes) says of a consumer file. */
function typeCheck(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    return `${diagnostic.file?.fileName.split('/').pop()}:${(where?.line ?? -1) + 1}: ${message}`;
  });
}

test('openapi-typescript (default options) types the served document as the service accepts it', async (t) => {
  const dir = tempDir(t);
  await generate(t, dir);
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
  assert.deepEqual(typeCheck(join(dir, 'consumer.ts')), []);
});

test('an openapi-fetch client on those types compiles and changes, then removes, an animal', async (t) => {
  const dir = tempDir(t);
  const { h, server } = await generate(t, dir);
  symlinkSync(fileURLToPath(new URL('../../node_modules', import.meta.url)), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'fetch-consumer.ts'), FETCH_CONSUMER);
  assert.deepEqual(typeCheck(join(dir, 'fetch-consumer.ts')), []);

  // Run through tsx, as the tests are; the base URL is the document's server, absolute as served.
  const consumer = (await import(pathToFileURL(join(dir, 'fetch-consumer.ts')).href)) as {
    correctAndRemove(baseUrl: string, key: string): Promise<Record<string, unknown>>;
  };
  assert.deepEqual(await consumer.correctAndRemove(server, h.keys.all), {
    read: 'Rex',
    changed: [200, 'Rexa'],
    retagged: true,
    stale: [412, 'precondition_failed'],
    listed: ['Rexa'],
    removed: 204,
    gone: 'not_found',
  });
});
