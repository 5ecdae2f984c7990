import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { type CallResult, expectError } from '../helpers/calls.js';
import { type Harness, sharedHarness, startHarness } from '../helpers/harness.js';
import { settledFeed } from '../helpers/settled-feed.js';
import { eachBackend } from '../helpers/stores.js';

/** The `$id` under which the whole fetched document is loaded into Ajv, so its local `$ref`s resolve. */
const DOCUMENT_ID = 'https://petstore.test/openapi.json';
const ERROR_REF = '#/components/schemas/Error';

/** The schema an error response refers to: a plain $ref, or one wrapped in allOf to carry an example. */
function errorRef(schema: { $ref?: string; allOf?: { $ref?: string }[] } | undefined): string | undefined {
  return schema?.$ref ?? schema?.allOf?.[0]?.$ref;
}
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operation: any;
}

async function fetchDocument(h: Harness): Promise<any> {
  const result = await h.call('GET', '/v1/openapi.json', { key: null });
  assert.equal(result.status, 200, `GET /v1/openapi.json without a key: ${result.status} ${result.text}`);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(typeof result.json, 'object', 'the document is a JSON object');
  return result.json;
}

/** Every operation of the document, in document order. */
function operations(doc: any): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      if (item[method] !== undefined) found.push({ method, path, operation: item[method] });
    }
  }
  return found;
}

function operationById(doc: any, operationId: string): Operation {
  const matches = operations(doc).filter((o) => o.operation.operationId === operationId);
  assert.equal(matches.length, 1, `exactly one operation has operationId ${operationId}`);
  return matches[0] as Operation;
}

/** Follows a local `#/...` reference (only those; the document has no others). */
function resolve(doc: any, value: any): any {
  if (typeof value?.$ref !== 'string') return value;
  const ref: string = value.$ref;
  assert.ok(ref.startsWith('#/'), `only local references are expected, got ${ref}`);
  let target = doc;
  for (const part of ref.slice(2).split('/')) {
    target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  assert.notEqual(target, undefined, `reference ${ref} resolves`);
  return target;
}

function queryParameter(doc: any, operationId: string, name: string): any {
  const { operation } = operationById(doc, operationId);
  const parameter = (operation.parameters ?? [])
    .map((p: any) => resolve(doc, p))
    .find((p: any) => p.in === 'query' && p.name === name);
  assert.ok(parameter, `${operationId} has query parameter ${name}`);
  return { ...parameter, schema: resolve(doc, parameter.schema) };
}

function headerNames(response: any): string[] {
  return Object.keys(response?.headers ?? {}).map((name) => name.toLowerCase());
}

function pointer(...parts: string[]): string {
  return parts.map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Validators for the response bodies the document declares. The whole document is one schema resource in Ajv
 * (JSON Schema 2020-12, the dialect of OpenAPI 3.1), and each body schema is addressed by its JSON pointer in it,
 * so nothing about the schemas is restated here.
 */
function bodyValidators(doc: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addSchema({ ...structuredClone(doc), $id: DOCUMENT_ID });

  // Every component is a valid JSON Schema 2020-12 schema (the OpenAPI validator does not look inside schemas).
  for (const [name, schema] of Object.entries<any>(doc.components?.schemas ?? {})) {
    assert.ok(ajv.validateSchema(schema), `components.schemas.${name}: ${ajv.errorsText(ajv.errors)}`);
  }

  const compile = (at: string) => {
    const validate = ajv.getSchema(`${DOCUMENT_ID}#${at}`);
    assert.ok(validate, `Ajv compiles the schema at ${at}`);
    return validate;
  };

  return {
    component: (name: string) => compile(pointer('components', 'schemas', name)),
    /** The validator for the JSON body the document declares for this operation and status. */
    response(operationId: string, status: number) {
      const { method, path, operation } = operationById(doc, operationId);
      const response = operation.responses?.[String(status)];
      assert.ok(response, `${operationId} documents a ${status} response`);
      assert.ok(
        response.content?.['application/json']?.schema,
        `${operationId} ${status} has an application/json body`,
      );
      return compile(
        pointer('paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema'),
      );
    },
    errorsText: (errors: unknown) => ajv.errorsText(errors as Parameters<typeof ajv.errorsText>[0]),
  };
}

type Validators = ReturnType<typeof bodyValidators>;

/** Asserts the response has this status and a JSON body that matches the schema the document declares for it. */
function assertMatches(validators: Validators, result: CallResult, operationId: string, status: number) {
  assert.equal(result.status, status, `${operationId}: expected ${status}, got ${result.status} ${result.text}`);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/, `${operationId} ${status} content-type`);
  assert.notEqual(result.json, undefined, `${operationId} ${status}: the body is JSON`);
  const validate = validators.response(operationId, status);
  if (!validate(result.json)) {
    assert.fail(
      `${operationId} ${status}: the body does not match the documented schema: ` +
        `${validators.errorsText(validate.errors)}\nbody: ${result.text}`,
    );
  }
}

eachBackend((backend) => {
  describe(`OpenAPI document [${backend.name}]`, () => {
    // The tests that only read the document share one service; those that change data start their own.
    const documentHarness = sharedHarness(backend);

    test('is served without a key and is a valid OpenAPI 3.1 document', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      assert.ok(result.valid, `the OpenAPI validator refuses the document: ${JSON.stringify(result.errors, null, 2)}`);
      assert.equal(validator.version, '3.1');
      // The schemas are valid JSON Schema 2020-12 and every body schema compiles.
      const validators = bodyValidators(doc);
      for (const { operation } of operations(doc)) {
        for (const status of Object.keys(operation.responses ?? {})) {
          if (operation.responses[status].content?.['application/json']) {
            validators.response(operation.operationId, Number(status));
          }
        }
      }
    });

    test('version, servers and paths', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      assert.equal(doc.info?.version, '1.0.0');
      assert.equal(typeof doc.info?.title, 'string');
      assert.ok(Array.isArray(doc.servers) && doc.servers.length > 0, 'servers is a non-empty array');
      assert.equal(doc.servers[0].url, `${h.url}/v1`, 'without PUBLIC_URL: where the request reached the service');
      const paths = Object.keys(doc.paths ?? {});
      assert.ok(paths.includes('/pets'), 'paths has /pets');
      assert.ok(paths.includes('/pets/{petId}'), 'paths has /pets/{petId}');
      for (const path of paths) {
        assert.ok(!path.startsWith('/v1'), `${path}: paths are relative to the server URL, which carries /v1`);
        assert.doesNotMatch(path, /healthz|readyz|openapi|\/docs/, `meta route ${path} must not be documented`);
      }
    });

    test('servers[0].url is where a trusted proxy says the request came in, without PUBLIC_URL', async (t) => {
      const h = await startHarness(t, backend);
      const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'pets.example.com' };
      const direct = (await h.call('GET', '/v1/openapi.json', { headers: forwarded })).json;
      assert.equal(direct.servers[0].url, `${h.url}/v1`, 'an untrusted client does not choose it');
      const proxied = await startHarness(t, backend, { trustProxy: ['127.0.0.1'] });
      const behind = (await proxied.call('GET', '/v1/openapi.json', { headers: forwarded })).json;
      assert.equal(behind.servers[0].url, 'https://pets.example.com/v1');
    });

    test('servers[0].url is absolute under PUBLIC_URL', async (t) => {
      const h = await startHarness(t, backend, { publicUrl: 'https://pets.example.com' });
      const doc = await fetchDocument(h);
      assert.equal(doc.servers[0].url, 'https://pets.example.com/v1');
    });

    test('operations: ids, methods, paths and deprecation', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      const all = operations(doc);
      const ids = all.map((o) => o.operation.operationId);
      assert.ok(
        ids.every((id) => typeof id === 'string'),
        'every operation has an operationId',
      );
      assert.equal(new Set(ids).size, ids.length, `operationIds are unique: ${ids.join(', ')}`);
      const expected = { listPets: 'get /pets', createPet: 'post /pets', getPet: 'get /pets/{petId}' };
      for (const [id, where] of Object.entries(expected)) {
        const { method, path } = operationById(doc, id);
        assert.equal(`${method} ${path}`, where, `${id} is ${where}`);
      }
      const deprecated = all.filter((o) => o.operation.deprecated === true).map((o) => o.operation.operationId);
      assert.deepEqual(deprecated, ['getPet'], 'only getPet is deprecated');

      const getPet = operationById(doc, 'getPet').operation;
      const petId = (getPet.parameters ?? []).map((p: any) => resolve(doc, p)).find((p: any) => p.name === 'petId');
      assert.ok(petId, 'getPet has the petId parameter');
      assert.equal(petId.in, 'path');
      assert.equal(petId.required, true);
      assert.equal(resolve(doc, petId.schema).type, 'integer');
      assert.equal(resolve(doc, petId.schema).format, 'int64');

      const body = operationById(doc, 'createPet').operation.requestBody;
      assert.equal(body?.required, true, 'createPet requires a body');
      assert.equal(body?.content?.['application/json']?.schema?.$ref, '#/components/schemas/NewPet');
    });

    test('bearer authentication applies to every operation', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      const schemes = Object.entries<any>(doc.components?.securitySchemes ?? {}).filter(
        ([, scheme]) => scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer',
      );
      assert.equal(schemes.length, 1, 'one http bearer security scheme');
      const [name] = schemes[0] as [string, unknown];
      assert.ok(
        Array.isArray(doc.security) && doc.security.some((requirement: any) => name in requirement),
        `the bearer scheme ${name} is required globally`,
      );
      for (const { operation } of operations(doc)) {
        if (operation.security === undefined) continue;
        assert.ok(
          operation.security.length > 0 && operation.security.every((requirement: any) => name in requirement),
          `${operation.operationId} must not lift or replace the bearer requirement`,
        );
      }
    });

    test('listPets query parameters', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      const limit = queryParameter(doc, 'listPets', 'limit');
      assert.notEqual(limit.required, true);
      assert.equal(limit.schema.type, 'integer');
      assert.equal(limit.schema.minimum, 1);
      assert.equal(limit.schema.maximum, 100);
      assert.equal(limit.schema.default, 20);
      const status = queryParameter(doc, 'listPets', 'status');
      assert.notEqual(status.required, true);
      const statusSchema = resolve(doc, status.schema.allOf?.[0] ?? status.schema);
      assert.deepEqual([...statusSchema.enum].sort(), ['available', 'pending', 'sold']);
      const cursor = queryParameter(doc, 'listPets', 'cursor');
      assert.notEqual(cursor.required, true);
      assert.equal(cursor.schema.type, 'string');
    });

    test('documented headers: Link on listPets 200, Location on createPet 201', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      assert.ok(headerNames(operationById(doc, 'listPets').operation.responses?.['200']).includes('link'));
      assert.ok(headerNames(operationById(doc, 'createPet').operation.responses?.['201']).includes('location'));
    });

    test('error responses: the statuses each operation needs, all with the Error body', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      const required: Record<string, string[]> = {
        listPets: ['400', '401', '403'],
        createPet: ['400', '401', '403', '413', '415'],
        getPet: ['401', '403', '404'],
      };
      for (const [id, statuses] of Object.entries(required)) {
        const responses = operationById(doc, id).operation.responses ?? {};
        for (const status of statuses) assert.ok(responses[status], `${id} documents ${status}`);
      }
      for (const { operation } of operations(doc)) {
        const responses = operation.responses ?? {};
        // Every operation requires the key, so every one can answer 401, 429 (rate limits) and 503 (the
        // database away, the server stopping); the last two say when to retry.
        for (const status of ['401', '429', '503'])
          assert.ok(responses[status], `${operation.operationId} documents ${status}`);
        for (const status of ['429', '503']) {
          const retryAfter = responses[status].headers?.['Retry-After'];
          assert.equal(retryAfter?.schema?.type, 'integer', `${operation.operationId} ${status} has Retry-After`);
        }
        for (const [status, response] of Object.entries<any>(responses)) {
          if (!/^[45]/.test(status) && status !== 'default') continue;
          const content = resolve(doc, response).content ?? {};
          assert.deepEqual(Object.keys(content), ['application/json'], `${operation.operationId} ${status} is JSON`);
          const media = content['application/json'];
          assert.equal(
            errorRef(media.schema),
            ERROR_REF,
            `${operation.operationId} ${status} references the Error schema`,
          );
          // The example a reader sees is a real Error body for this very status.
          assert.equal(media.example?.status, Number(status), `${operation.operationId} ${status} example`);
          assert.ok(typeof media.example?.code === 'string' && typeof media.example?.message === 'string');
        }
      }
    });

    test('components.schemas: Pet, NewPet, PetStatus, Error', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      const schemas = doc.components?.schemas ?? {};
      for (const name of ['Pet', 'NewPet', 'PetStatus', 'Error'])
        assert.ok(schemas[name], `components.schemas.${name}`);
      assert.deepEqual([...schemas.PetStatus.enum].sort(), ['available', 'pending', 'sold']);
      const { Error: error, Pet: pet, NewPet: newPet } = schemas;
      assert.deepEqual([...error.required].sort(), ['code', 'message', 'status']);
      assert.equal(error.properties.code.type, 'string');
      assert.equal(error.properties.message.type, 'string');
      assert.equal(error.properties.status.type, 'integer');
      for (const field of ['id', 'name', 'categoryId'])
        assert.ok(pet.required.includes(field), `Pet requires ${field}`);
      assert.equal(pet.properties.id.format, 'int64');
      assert.equal(pet.properties.categoryId.format, 'int64');
      assert.equal(pet.properties.status.$ref, '#/components/schemas/PetStatus');
      assert.deepEqual([...newPet.required].sort(), ['categoryId', 'name']);
      assert.equal(newPet.properties.id, undefined, 'NewPet has no id: the service assigns it');
      // Told, not a `default` keyword, which makes openapi-typescript require it (test/http/openapi-typescript.test.ts).
      assert.match(newPet.properties.status.description, /Defaults to `available`/, 'the default status is documented');
      assert.equal(newPet.properties.status.default, undefined);
    });

    test('the body validators catch bodies that break the schemas', async () => {
      const h = await documentHarness();
      const validators = bodyValidators(await fetchDocument(h));
      const pet = validators.response('getPet', 200);
      const good = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
      assert.ok(pet(good), validators.errorsText(pet.errors));
      assert.equal(pet({ ...good, extra: true }), false, 'an extra property is refused');
      assert.equal(pet({ id: 1, categoryId: 1, status: 'sold' }), false, 'a missing name is refused');
      assert.equal(pet({ ...good, status: 'lost' }), false, 'an unknown status is refused');
      assert.equal(pet({ ...good, id: 1.5 }), false, 'a fractional id is refused');
      assert.equal(pet({ ...good, id: '1' }), false, 'a string id is refused');
      const list = validators.response('listPets', 200);
      assert.ok(list([good, good]));
      assert.equal(list([good, { ...good, extra: 1 }]), false, 'a bad item is refused');
      assert.equal(list(good), false, 'an object is not a page');
      const error = validators.response('getPet', 404);
      const notFound = { code: 'not_found', message: 'x', status: 404 };
      assert.ok(error(notFound), validators.errorsText(error.errors));
      assert.equal(error({ ...notFound, detail: 'x' }), false, 'an extra property is refused');
      assert.equal(error({ code: 'not_found', message: 'x' }), false, 'a missing status is refused');
      assert.equal(error({ ...notFound, status: '404' }), false, 'a string status is refused');
    });

    test('the store area: orders operations, the Order schema, 409s, marked as an extension', async () => {
      const h = await documentHarness();
      const doc = await fetchDocument(h);
      const expected = {
        listOrders: 'get /store/orders',
        placeOrder: 'post /store/orders',
        getOrder: 'get /store/orders/{orderId}',
        changeOrderStatus: 'patch /store/orders/{orderId}',
      };
      for (const [id, where] of Object.entries(expected)) {
        const { method, path, operation } = operationById(doc, id);
        assert.equal(`${method} ${path}`, where);
        assert.deepEqual(operation.tags, ['store']);
        assert.match(operation.description ?? '', /Extension of the v1 interface's store area/);
      }
      for (const id of ['placeOrder', 'changeOrderStatus']) {
        const conflict = operationById(doc, id).operation.responses?.['409'];
        assert.equal(errorRef(conflict?.content?.['application/json']?.schema), ERROR_REF, id);
      }
      const order = doc.components.schemas.Order;
      assert.deepEqual([...order.required].sort(), ['complete', 'createdAt', 'id', 'petId', 'quantity', 'status']);
      assert.deepEqual(doc.components.schemas.OrderStatus.enum, ['placed', 'approved', 'delivered', 'cancelled']);
      const { quantity } = doc.components.schemas.NewOrder.properties;
      assert.deepEqual([quantity.description, quantity.default], ['Defaults to 1.', undefined]);
    });

    test('order bodies the service sends match the documented schemas', async (t) => {
      const h = await startHarness(t, backend);
      const v = bodyValidators(await fetchDocument(h));
      const pet = (await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 } })).json;
      const placed = await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } });
      assertMatches(v, placed, 'placeOrder', 201);
      assertMatches(v, await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } }), 'placeOrder', 409);
      assertMatches(v, await h.call('POST', '/v1/store/orders', { body: { petId: 999 } }), 'placeOrder', 404);
      assertMatches(v, await h.call('POST', '/v1/store/orders', { body: {} }), 'placeOrder', 400);
      assertMatches(v, await h.call('GET', '/v1/store/orders'), 'listOrders', 200);
      assertMatches(v, await h.call('GET', `/v1/store/orders/${placed.json.id}`), 'getOrder', 200);
      assertMatches(v, await h.call('GET', '/v1/store/orders/77'), 'getOrder', 404);
      const path = `/v1/store/orders/${placed.json.id}`;
      assertMatches(v, await h.call('PATCH', path, { body: { status: 'approved' } }), 'changeOrderStatus', 200);
      assertMatches(v, await h.call('PATCH', path, { body: { status: 'placed' } }), 'changeOrderStatus', 409);
      assertMatches(
        v,
        await h.call('PATCH', path, { key: h.keys.read, body: { status: 'delivered' } }),
        'changeOrderStatus',
        403,
      );
    });

    test('events: the feed matches its schema, and the webhooks section describes each type', async (t) => {
      const h = await startHarness(t, backend);
      const doc = await fetchDocument(h);
      const v = bodyValidators(doc);
      const pet = (await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 } })).json;
      const order = (await h.call('POST', '/v1/store/orders', { body: { petId: pet.id } })).json;
      await h.call('PATCH', `/v1/store/orders/${order.id}`, { body: { status: 'cancelled' } });
      await settledFeed((path) => h.call('GET', path), 5);
      const feed = await h.call('GET', '/v1/events');
      assertMatches(v, feed, 'listEvents', 200);
      assert.equal(feed.json.length, 5);
      assertMatches(v, await h.call('GET', '/v1/events?cursor=nope'), 'listEvents', 400);
      assert.ok(operationById(doc, 'listEvents').operation.responses['410'], 'the 410 is documented');
      const one = operationById(doc, 'getEvent');
      assert.equal(`${one.method} ${one.path}`, 'get /events/{eventId}');
      assert.deepEqual(one.operation.tags, operationById(doc, 'listEvents').operation.tags);
      for (const event of feed.json) assertMatches(v, await h.call('GET', `/v1/events/${event.id}`), 'getEvent', 200);
      assertMatches(v, await h.call('GET', '/v1/events/evt_999999'), 'getEvent', 404);
      assertMatches(v, await h.call('GET', '/v1/events/evt_x'), 'getEvent', 400);
      assertMatches(v, await h.call('GET', `/v1/events/${feed.json[0].id}`, { key: h.keys.write }), 'getEvent', 403);

      assert.deepEqual(Object.keys(doc.webhooks), [
        'pet.created',
        'pet.status_changed',
        'pet.updated',
        'pet.deleted',
        'order.placed',
        'order.status_changed',
        'webhook_endpoint.disabled',
        'webhook.test',
      ]);
      for (const event of feed.json) {
        const post = doc.webhooks[event.type].post;
        assert.deepEqual(
          post.parameters.map((p: { name: string }) => p.name),
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
        );
        const validate = v.component(post.requestBody.content['application/json'].schema.$ref.split('/').at(-1));
        assert.ok(validate(event), `${event.type}: ${v.errorsText(validate.errors)}`);
      }
    });

    test('the bodies the service sends match the documented schemas', async (t) => {
      const h = await startHarness(t, backend);
      const v = bodyValidators(await fetchDocument(h));

      const created = await h.call('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 7, status: 'sold' } });
      assertMatches(v, created, 'createPet', 201);
      assert.ok(created.headers.get('location'), 'the documented Location header is sent');
      await h.createPets(3);
      await h.call('POST', '/v1/pets', { body: { name: 'Tom', categoryId: 1 } });

      const page = await h.call('GET', '/v1/pets');
      assertMatches(v, page, 'listPets', 200);
      assert.equal(page.json.length, 5);
      const firstPage = await h.call('GET', '/v1/pets?limit=2&status=available');
      assertMatches(v, firstPage, 'listPets', 200);
      const next = /<([^>]+)>; rel="next"/.exec(firstPage.headers.get('link') ?? '')?.[1];
      assert.ok(next, 'the documented Link header is sent when more pets exist');
      assertMatches(v, await h.call('GET', next.slice(next.indexOf('/v1/'))), 'listPets', 200);
      assertMatches(v, await h.call('GET', '/v1/pets?status=pending'), 'listPets', 200);

      assertMatches(v, await h.call('GET', `/v1/pets/${created.json.id}`), 'getPet', 200);
      const changed = await h.call('PATCH', `/v1/pets/${created.json.id}`, { body: { name: 'Rex II' } });
      assertMatches(v, changed, 'updatePet', 200);
      assert.equal(changed.headers.get('etag'), '"2"', 'the documented ETag header is sent');
      const [held] = await h.createPets(1);
      await h.call('POST', '/v1/store/orders', { body: { petId: held.id } });

      const errors: [string, string, Parameters<Harness['call']>[2], number, string][] = [
        ['listPets', '/v1/pets?limit=0', {}, 400, 'invalid_request'],
        ['listPets', '/v1/pets?status=lost', {}, 400, 'invalid_request'],
        ['createPet', '/v1/pets', { body: {} }, 400, 'invalid_request'],
        ['createPet', '/v1/pets', { body: { id: 1, name: 'x', categoryId: 1 } }, 400, 'invalid_request'],
        ['createPet', '/v1/pets', { body: '{"name": ' }, 400, 'invalid_request'],
        ['getPet', '/v1/pets/abc', {}, 400, 'invalid_request'],
        ['listPets', '/v1/pets', { key: null }, 401, 'unauthorized'],
        ['createPet', '/v1/pets', { key: null, body: { name: 'x', categoryId: 1 } }, 401, 'unauthorized'],
        ['getPet', `/v1/pets/${created.json.id}`, { key: null }, 401, 'unauthorized'],
        ['getPet', `/v1/pets/${created.json.id}`, { key: 'psk_not-a-key' }, 401, 'unauthorized'],
        ['createPet', '/v1/pets', { key: h.keys.read, body: { name: 'x', categoryId: 1 } }, 403, 'forbidden'],
        ['listPets', '/v1/pets', { key: h.keys.write }, 403, 'forbidden'],
        ['getPet', `/v1/pets/${created.json.id}`, { key: h.keys.write }, 403, 'forbidden'],
        ['getPet', '/v1/pets/999999', {}, 404, 'not_found'],
        ['updatePet', `/v1/pets/${created.json.id}`, { body: { id: 1 } }, 400, 'invalid_request'],
        ['updatePet', `/v1/pets/${created.json.id}`, { key: h.keys.read, body: {} }, 403, 'forbidden'],
        ['updatePet', '/v1/pets/999999', { body: {} }, 404, 'not_found'],
        ['updatePet', `/v1/pets/${held.id}`, { body: { status: 'sold' } }, 409, 'conflict'],
        ['updatePet', `/v1/pets/${held.id}`, { body: {}, headers: { 'if-match': '"1"' } }, 412, 'precondition_failed'],
        ['deletePet', '/v1/pets/999999', {}, 404, 'not_found'],
        ['deletePet', `/v1/pets/${held.id}`, {}, 409, 'conflict'],
        ['deletePet', `/v1/pets/${held.id}`, { headers: { 'if-match': '"1"' } }, 412, 'precondition_failed'],
        ['createPet', '/v1/pets', { body: { name: 'x'.repeat(64 * 1024), categoryId: 1 } }, 413, 'payload_too_large'],
        [
          'createPet',
          '/v1/pets',
          { headers: { 'content-type': 'text/plain' }, body: '{"name":"x","categoryId":1}' },
          415,
          'unsupported_media_type',
        ],
      ];
      for (const [operationId, path, options, status, code] of errors) {
        const method = { createPet: 'POST', updatePet: 'PATCH', deletePet: 'DELETE' }[operationId] ?? 'GET';
        const result = await h.call(method, path, options);
        assertMatches(v, result, operationId, status);
        expectError(result, status, code);
      }
    });
  });
});
