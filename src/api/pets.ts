import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { NAME_MAX_CHARS, petNameProblem } from '../domain/pet-name.js';
import { ERRORS } from '../errors/catalogue.js';
import { deprecationHooks } from '../http/deprecation.js';
import { createdResponse, IdempotencyKeyHeader, REPLAYED, REPLAYED_HEADER } from '../http/idempotency.js';
import { Pager } from '../http/pager.js';
import { errorResponses } from '../openapi/error-responses.js';
import { toPet } from '../representations/resources.js';
import { NEXT_LINK_HEADER, PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { ListPetsQuery, NewPet, Pet, PetIdParams } from '../schemas/pet.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import type { PetRecord } from '../store/records.js';
import { docsLink } from './docs.js';
import type { RouteOptions } from './route-options.js';

/** The interface removes `GET /pets/{petId}` on 5 December 2030; it was deprecated from this service's first release. */
const GET_PET_DEPRECATED_AT = new Date('2026-11-21T00:00:00Z');
const GET_PET_SUNSET_AT = new Date('2030-12-05T00:00:00Z');
const DEPRECATION_HEADERS = {
  Deprecation: { type: 'string', description: 'RFC 9745: when the operation was deprecated (`@<epoch seconds>`).' },
  Sunset: { type: 'string', description: 'RFC 8594: when it stops working, `Thu, 05 Dec 2030 00:00:00 GMT`.' },
  Link: {
    type: 'string',
    description: 'The successor (`rel="successor-version"`) and the notice (`rel="deprecation"`).',
  },
};

const routes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, idempotency, clock, cursors, links }) => {
  const pager = new Pager(cursors.pets, links, '/v1/pets', app.storeCache);
  const location = (pet: PetRecord) => links.to(`/v1/pets/${pet.id}`);
  app.get(
    '/v1/pets',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listPets',
        summary: 'List animals',
        description:
          'A page of animals in ascending `id` (creation) order. When more exist, the `Link` header carries ' +
          'the next page (`rel="next"`); pages never skip or repeat an animal, even while others are added.',
        tags: ['pets'],
        querystring: ListPetsQuery,
        response: {
          200: Type.Array(ref(Pet), {
            description: 'A page of animals.',
            headers: NEXT_LINK_HEADER,
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
        },
      },
    },
    async (request, reply) => {
      const { limit = PAGE_LIMIT_DEFAULT, status, cursor } = request.query;
      return pager.send(reply, { limit, filters: { status }, cursor }, (page) =>
        store.pets.list({ ...page, status }).then((records) => records.map(toPet)),
      );
    },
  );

  app.post(
    '/v1/pets',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'createPet',
        summary: 'Add an animal',
        description:
          'Adds an animal; the service assigns its `id`, and its status is `available` unless another is sent. ' +
          'With an `Idempotency-Key`, a retry answers as the first request did and adds nothing.',
        tags: ['pets'],
        querystring: NoQuery,
        headers: IdempotencyKeyHeader,
        body: ref(NewPet),
        response: {
          201: ref(Pet, {
            description: 'The created animal, with its assigned `id`.',
            headers: { Location: { type: 'string', description: 'URL of the created animal.' }, ...REPLAYED_HEADER },
          }),
          ...errorResponses(
            'invalid_request',
            'unauthorized',
            'forbidden',
            'conflict',
            'payload_too_large',
            'unsupported_media_type',
            'idempotency_mismatch',
          ),
        },
      },
    },
    async (request, reply) => {
      const { name, categoryId, status = 'available' } = request.body;
      const problem = petNameProblem(name);
      if (problem?.kind === 'blank') throw ERRORS.blankName.create();
      if (problem?.kind === 'too_long') throw ERRORS.nameTooLong.create(NAME_MAX_CHARS, problem.chars);
      const record = { name, categoryId, status };
      const pet = await idempotency.run(request, reply, {
        body: record,
        plain: () => store.pets.create(record),
        once: (once) => store.pets.createOnce(record, once),
        render: (created: PetRecord) => createdResponse(location(created), toPet(created)),
      });
      if (pet === REPLAYED) return reply;
      reply.code(201).header('location', location(pet));
      return toPet(pet);
    },
  );

  app.get(
    '/v1/pets/:petId',
    {
      config: { scope: 'read' },
      ...deprecationHooks(
        {
          deprecatedAt: GET_PET_DEPRECATED_AT,
          sunsetAt: GET_PET_SUNSET_AT,
          successor: links.to('/v1/pets'),
          notice: links.to(docsLink('pets', 'getPet')),
        },
        clock,
      ),
      schema: {
        operationId: 'getPet',
        summary: 'Get an animal (deprecated)',
        description:
          'Deprecated: removed on 5 December 2030 (`Sunset` header); use `GET /pets` with the `status` filter. ' +
          'Responses carry `Deprecation`, `Sunset` and `Link` headers; after the sunset the operation answers 410.',
        deprecated: true,
        tags: ['pets'],
        params: PetIdParams,
        querystring: NoQuery,
        response: {
          200: ref(Pet, { description: 'The animal.', headers: DEPRECATION_HEADERS }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'gone'),
        },
      },
    },
    async (request) => {
      const { petId } = request.params;
      const pet = petId >= 1 ? await store.pets.get(petId) : undefined;
      if (pet === undefined) throw ERRORS.petNotFound.create(petId);
      return toPet(pet);
    },
  );
};

export const petRoutes = fp(routes, {
  name: 'pet-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
