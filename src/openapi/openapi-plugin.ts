import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Links } from '../http/links.js';
import { ERROR_CODES } from '../schemas/error-codes.js';
import { optionalBodies } from './optional-bodies.js';
import { webhooksSection } from './webhooks-section.js';

/** The interface description version (docs/decisions/versioning.md), apart from the package's own version. */
const INTERFACE_VERSION = '1.0.0';

/** The package is UNLICENSED (package.json): no licence is granted, which SPDX spells as a LicenseRef. */
const LICENSE = { name: 'Proprietary: no licence is granted', identifier: 'LicenseRef-Proprietary' };

/**
 * The OpenAPI 3.1 document, generated from the routes' schemas: registered before the routes, which it
 * collects as they are added. `/v1/openapi.json` and `/docs` serve it.
 */
export const openapi = fp(
  async (app: FastifyInstance, { links }: { links: Links }) => {
    const markOptionalBodies = optionalBodies(app);
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Pet store',
          version: INTERFACE_VERSION,
          // Whoever runs this instance: the document is served by each deployment, which has no address of its own here.
          contact: { name: 'The operators of this pet store instance' },
          license: LICENSE,
          description:
            'The pet store service interface v1. Error codes: ' +
            `${Object.keys(ERROR_CODES).join(', ')}. Within /v1 changes are additive only; clients must ignore unknown fields.`,
        },
        servers: [{ url: links.to('/v1') }],
        components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
        webhooks: webhooksSection(),
        security: [{ bearerAuth: [] }],
        tags: [
          { name: 'pets', description: 'The animals of the store.' },
          { name: 'store', description: "Orders: an extension of the interface's store area (`GET /store/orders`)." },
          { name: 'events', description: 'What changed: the change feed, as pages or a live stream.' },
          { name: 'webhooks', description: 'Endpoints the service pushes events to, and the log of its attempts.' },
          {
            name: 'audit',
            description: 'Who changed what: the configuration changes of endpoints, keys and portal links.',
          },
        ],
      },
      transformObject: (document) =>
        'openapiObject' in document ? markOptionalBodies(document.openapiObject) : document.swaggerObject,
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    });
  },
  { name: 'openapi', dependencies: ['validation'] },
);
