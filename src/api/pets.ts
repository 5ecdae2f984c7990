import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { strongTag } from '../domain/entity-tags.js';
import { NAME_MAX_CHARS, petNameProblem } from '../domain/pet-name.js';
import { ERRORS } from '../errors/catalogue.js';
import { deprecationHooks } from '../http/deprecation.js';
import {
  documentIfNoneMatch,
  ETAG_HEADER,
  IfMatchHeader,
  ifMatchOf,
  notModified,
  notModifiedSent,
  PAGE_ETAG_HEADER,
} from '../http/entity-tags.js';
import { createdResponse, IdempotencyKeyHeader, REPLAYED, REPLAYED_HEADER } from '../http/idempotency.js';
import { Pager } from '../http/pager.js';
import { errorResponses } from '../openapi/error-responses.js';
import { toPet } from '../representations/resources.js';
import { NEXT_LINK_HEADER, PAGE_LIMIT_DEFAULT } from '../schemas/page.js';
import { ListPetsQuery, NewPet, Pet, PetChange, PetIdParams } from '../schemas/pet.js';
import { NoQuery } from '../schemas/query.js';
import { ref } from '../schemas/ref.js';
import type { PetChangeRefusal, PetRecord } from '../store/records.js';
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

/** A name as creation checks it, beyond the schema: something visible, and not too long once trimmed. */
function checkName(name: string): void {
  const problem = petNameProblem(name);
  if (problem?.kind === 'blank') throw ERRORS.blankName.create();
  if (problem?.kind === 'too_long') throw ERRORS.nameTooLong.create(NAME_MAX_CHARS, problem.chars);
}

/** The error of a refused change or deletion of pet `id`. */
function refused(id: number, refusal: PetChangeRefusal, held: typeof ERRORS.petStatusHeld) {
  switch (refusal.outcome) {
    case 'pet_not_found':
      return ERRORS.petNotFound.create(id);
    case 'version_mismatch':
      return ERRORS.petChanged.create(id, strongTag(refusal.version));
    case 'held':
      return held.create(id, refusal.order.id, refusal.order.status);
  }
}

const WRITE_ERRORS = ['invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict'] as const;

const routes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store, idempotency, clock, cursors, links }) => {
  const pager = new Pager(cursors.pets, links, '/v1/pets', app.storeCache, { etags: true });
  const location = (pet: PetRecord) => links.to(`/v1/pets/${pet.id}`);
  app.get(
    '/v1/pets',
    {
      config: { scope: 'read', swaggerTransform: documentIfNoneMatch },
      schema: {
        operationId: 'listPets',
        summary: 'List animals',
        description:
          'A page of animals in ascending `id` (creation) order. When more exist, the `Link` header carries ' +
          'the next page (`rel="next"`); pages never skip or repeat an animal, even while others are added. ' +
          'Each page has a weak `ETag`; with it as `If-None-Match`, an unchanged page is 304.',
        tags: ['pets'],
        querystring: ListPetsQuery,
        response: {
          200: Type.Array(ref(Pet), {
            description: 'A page of animals.',
            headers: { ...NEXT_LINK_HEADER, ...PAGE_ETAG_HEADER },
          }),
          304: notModified('the page'),
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
          'With an `Idempotency-Key`, a retry answers as the first request did and adds nothing. The `ETag` is ' +
          'its first version.',
        tags: ['pets'],
        querystring: NoQuery,
        headers: IdempotencyKeyHeader,
        body: ref(NewPet),
        response: {
          201: ref(Pet, {
            description: 'The created animal, with its assigned `id`.',
            headers: {
              Location: { type: 'string', description: 'URL of the created animal.' },
              ...ETAG_HEADER,
              ...REPLAYED_HEADER,
            },
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
      const { body } = request;
      checkName(body.name);
      // Every field as sent (NewPet has them all), the status defaulted.
      const record = { ...body, status: body.status ?? 'available' };
      const pet = await idempotency.run(request, reply, {
        body: record,
        plain: () => store.pets.create(record),
        once: (once) => store.pets.createOnce(record, once),
        render: (created: PetRecord) =>
          createdResponse(location(created), toPet(created), { etag: strongTag(created.version) }),
      });
      if (pet === REPLAYED) return reply;
      reply.code(201).header('location', location(pet)).header('etag', strongTag(pet.version));
      return toPet(pet);
    },
  );

  app.get(
    '/v1/pets/:petId',
    {
      config: { scope: 'read', swaggerTransform: documentIfNoneMatch },
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
          'Responses carry `Deprecation`, `Sunset` and `Link` headers; after the sunset the operation answers 410. ' +
          'The `ETag` is the version to send as `If-Match`; with it as `If-None-Match`, an unchanged animal is 304.',
        deprecated: true,
        tags: ['pets'],
        params: PetIdParams,
        querystring: NoQuery,
        response: {
          200: ref(Pet, { description: 'The animal.', headers: { ...DEPRECATION_HEADERS, ...ETAG_HEADER } }),
          304: notModified('the animal'),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'gone'),
        },
      },
    },
    async (request, reply) => {
      const { petId } = request.params;
      const pet = petId >= 1 ? await store.pets.get(petId) : undefined;
      if (pet === undefined) throw ERRORS.petNotFound.create(petId);
      if (notModifiedSent(request, reply, strongTag(pet.version))) return reply;
      return toPet(pet);
    },
  );

  app.patch(
    '/v1/pets/:petId',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'updatePet',
        summary: 'Correct an animal',
        description:
          'Changes the fields sent (a JSON Merge Patch, `application/merge-patch+json` or `application/json`), ' +
          'checked as on creation. `status` may change only while no order holds the animal (`placed` or ' +
          '`approved`): otherwise 409 naming the order. Records `pet.updated`, and `pet.status_changed` when ' +
          'the status moved; a patch that changes nothing records nothing. With `If-Match`, the change applies ' +
          'only to that version (412 otherwise); of concurrent changes with the same `If-Match`, one applies.',
        tags: ['pets'],
        params: PetIdParams,
        querystring: NoQuery,
        headers: IfMatchHeader,
        consumes: ['application/merge-patch+json', 'application/json'],
        body: ref(PetChange),
        response: {
          200: ref(Pet, { description: 'The animal, changed.', headers: ETAG_HEADER }),
          ...errorResponses(...WRITE_ERRORS, 'precondition_failed', 'payload_too_large', 'unsupported_media_type'),
        },
      },
    },
    async (request, reply) => {
      const { petId } = request.params;
      const patch = request.body;
      if (patch.name !== undefined) checkName(patch.name);
      const expected = ifMatchOf(request);
      const result =
        petId >= 1 ? await store.pets.update(petId, patch, expected) : { outcome: 'pet_not_found' as const };
      if (result.outcome !== 'updated') throw refused(petId, result, ERRORS.petStatusHeld);
      reply.header('etag', strongTag(result.pet.version));
      return toPet(result.pet);
    },
  );

  app.delete(
    '/v1/pets/:petId',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'deletePet',
        summary: 'Remove an animal',
        description:
          'Removes the animal: afterwards it is 404 everywhere and never listed; its orders keep their `petId`. ' +
          'Refused (409, naming the order) while an order holds it (`placed` or `approved`). Records ' +
          '`pet.deleted`. With `If-Match`, only that version is removed (412 otherwise).',
        tags: ['pets'],
        params: PetIdParams,
        querystring: NoQuery,
        headers: IfMatchHeader,
        response: {
          204: Type.Null({ description: 'Removed.' }),
          ...errorResponses(...WRITE_ERRORS, 'precondition_failed'),
        },
      },
    },
    async (request, reply) => {
      const { petId } = request.params;
      const expected = ifMatchOf(request);
      const result = petId >= 1 ? await store.pets.remove(petId, expected) : { outcome: 'pet_not_found' as const };
      if (result.outcome !== 'removed') throw refused(petId, result, ERRORS.petDeleteHeld);
      return reply.code(204).send(null);
    },
  );
};

export const petRoutes = fp(routes, {
  name: 'pet-routes',
  dependencies: ['openapi', 'store-cache', 'auth', 'key-rate-limit'],
  encapsulate: true,
});
