import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { compileEverySchema } from '../../src/schema-compilers/first-use.js';
import { serializerFactory } from '../../src/schema-compilers/serializer-factory.js';
import { validatorCompiler } from '../../src/schema-compilers/validator-compiler.js';
import { BACKENDS, type StoreBackend } from '../helpers/stores.js';

/**
 * Serializers and validators compile on a route's first use (src/schema-compilers/first-use.ts), so a broken
 * schema no longer stops the service at start-up: here every one of them is compiled, as start-up once did.
 */

test("every route's response, body, query and path schemas compile", async (t) => {
  const sqlite = BACKENDS.find((backend) => backend.name === 'sqlite') as StoreBackend;
  const fixture = await sqlite.create();
  t.after(() => fixture.dispose());
  const app = await buildApp({ store: fixture.store });
  t.after(() => app.close());
  await app.ready();
  compileEverySchema();
});

/** A bare Fastify on the service's compilers, with one route of `schema`. */
async function withRoute(t: TestContext, schema: object): Promise<FastifyInstance> {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: serializerFactory() } } });
  t.after(() => app.close());
  app.setValidatorCompiler(validatorCompiler([]));
  app.post('/', { schema }, async () => ({}));
  // It starts: the schema compiles at its first use, or in compileEverySchema.
  await app.ready();
  return app;
}

test('a broken body schema fails compileEverySchema, and then its first request', async (t) => {
  const app = await withRoute(t, { body: { type: 'object', properties: { name: { type: 'text' } } } });
  assert.throws(compileEverySchema, /schema is invalid/);
  const response = await app.inject({ method: 'POST', url: '/', payload: { name: 'Rex' } });
  assert.equal(response.statusCode, 500);
});

test('a broken response schema fails compileEverySchema', async (t) => {
  await withRoute(t, { response: { 200: { type: 'object', properties: { pet: { $ref: 'Missing#' } } } } });
  assert.throws(compileEverySchema, /Missing/);
});
