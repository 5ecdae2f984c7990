import compress from '@fastify/compress';
import etag from '@fastify/etag';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Links } from '../http/links.js';

const DOCS_PATH = '/docs';

/** The route @fastify/static serves Swagger UI's files under: the files of the installed package. */
const ASSET_FILES = `${DOCS_PATH}/static/*`;

/**
 * Swagger UI's files change only when the package is upgraded, with a deploy, but their URLs carry no
 * version: a day's caching spares every visit after the first its 2.1 MB, and bounds how long a browser
 * may mix an old bundle with a new page after an upgrade. Then the file's ETag revalidates it.
 */
const ASSET_CACHE = 'public, max-age=86400';

/** The page and the documents change with any deploy: kept, but revalidated by ETag on every use. */
const DOCUMENT_CACHE = 'no-cache';

/** Swagger UI's deep link to an operation: `#/<tag>/<operationId>`. */
export function docsLink(tag: string, operationId: string): string {
  return `${DOCS_PATH}#/${tag}/${operationId}`;
}

/**
 * The documentation: the OpenAPI document and the interactive reference, Swagger UI rendering it, every
 * asset served from the package (the page works offline). Public; "Authorize" takes a key. Compressed
 * when the client accepts it, and cacheable, unlike the API's own responses (docs/decisions/docs-compressed-api-not.md).
 */
const routes: FastifyPluginAsync<{ links: Links }> = async (app, { links }) => {
  // Every route of this (encapsulated) plugin is public: the page, its assets and the document.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
  });
  // Responses only: a request body with a content coding stays refused (plugins/json-body.ts).
  await app.register(compress, { globalDecompression: false });
  // Weak: the same tag names the compressed and the identity form of a document.
  await app.register(etag, { weak: true });
  // After security-headers' `no-store`, which stays on errors.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 200 || reply.statusCode === 304) {
      reply.header('cache-control', request.routeOptions.url === ASSET_FILES ? ASSET_CACHE : DOCUMENT_CACHE);
    }
    done(null, payload);
  });

  /**
   * Without PUBLIC_URL the document's server is where this request reached it (through trusted proxies, as
   * their X-Forwarded-Proto and -Host say): a relative `/v1` leaves generated clients without a base URL in
   * Node. The page's copy (/docs/json) is the same document.
   */
  const served = <D extends object>(document: D, request: FastifyRequest): D =>
    !links.relative || request.host === ''
      ? document
      : { ...document, servers: [{ url: `${request.protocol}://${request.host}/v1` }] };
  app.get('/v1/openapi.json', { schema: { hide: true } }, async (request) => served(app.swagger(), request));
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    theme: { title: 'Pet store API' },
    // BaseLayout: no top bar with a URL field for exploring other documents; this page documents this service.
    uiConfig: { layout: 'BaseLayout', deepLinking: true, displayOperationId: true, defaultModelsExpandDepth: 0 },
    staticCSP: true,
    // The plugin's policy upgrades requests to HTTPS, which breaks the page (and "try it") over plain HTTP.
    transformStaticCSP: (policy) => policy.replace(/\s*upgrade-insecure-requests;/, ''),
    transformSpecification: (document, request) => served(document, request),
  });
};

// Encapsulated: the hooks above must apply to this plugin's routes only.
export const docsRoutes = fp(routes, { name: 'docs-routes', dependencies: ['openapi'], encapsulate: true });
