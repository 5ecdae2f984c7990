import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';

const DOCS_PATH = '/docs';

/** Swagger UI's deep link to an operation: `#/<tag>/<operationId>`. */
export function docsLink(tag: string, operationId: string): string {
  return `${DOCS_PATH}#/${tag}/${operationId}`;
}

/**
 * The interactive reference: Swagger UI rendering this service's OpenAPI document, every asset served
 * from the package (the page works offline). Public, like the document itself; "Authorize" takes a key.
 */
const routes: FastifyPluginAsync = async (app) => {
  // Every route of this (encapsulated) plugin is public: the page, its assets and its copy of the document.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    theme: { title: 'Pet store API' },
    // BaseLayout: no top bar with a URL field for exploring other documents; this page documents this service.
    uiConfig: { layout: 'BaseLayout', deepLinking: true, displayOperationId: true, defaultModelsExpandDepth: 0 },
    staticCSP: true,
    // The plugin's policy upgrades requests to HTTPS, which breaks the page (and "try it") over plain HTTP.
    transformStaticCSP: (policy) => policy.replace(/\s*upgrade-insecure-requests;/, ''),
  });
};

// Encapsulated: the onRoute hook above must make only this plugin's routes public.
export const docsRoutes = fp(routes, { name: 'docs-routes', dependencies: ['openapi'], encapsulate: true });
