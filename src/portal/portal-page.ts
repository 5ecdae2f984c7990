import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import etag from '@fastify/etag';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';

/**
 * The built page (`npm run build`: src/portal/page/ compiled and copied), found from the package root: this
 * file is two levels down both as src/portal/portal-page.ts (tests, through tsx) and dist/portal/portal-page.js.
 */
const PAGE_DIR = new URL('../../dist/portal/page/', import.meta.url);

const PAGE_FILE = 'index.html';

/** What the page is made of, by extension; anything else in the folder is not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Only the page's own scripts, styles and calls to this service: no inline script or style, no other
 * origin, no frame around it, no form posted anywhere (the forms are the scripts'), and DOM sinks that parse
 * markup (innerHTML…) refused outright by Trusted Types, since the page builds its DOM from text alone.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  // The page's address never leaves it, even though its token is gone from it before the first request.
  'referrer-policy': 'no-referrer',
  // A window that opened the link keeps no handle on the portal.
  'cross-origin-opener-policy': 'same-origin',
};

/** The page changes with any deploy: kept, but revalidated by ETag on every use. */
const CACHE = 'no-cache';

interface PageFile {
  readonly url: string;
  readonly type: string;
  readonly body: Buffer;
}

/** Reads the built page once: `/portal` is index.html, `/portal/assets/<name>` each script and style. */
function readPage(): PageFile[] {
  const dir = fileURLToPath(PAGE_DIR);
  if (!existsSync(new URL(PAGE_FILE, PAGE_DIR))) {
    throw new Error(`the webhook portal's page is not built (no ${dir}${PAGE_FILE}): run npm run build`);
  }
  return readdirSync(dir).flatMap((name) => {
    const type = CONTENT_TYPES[extname(name)];
    if (type === undefined) return [];
    const url = name === PAGE_FILE ? '/portal' : `/portal/assets/${name}`;
    return [{ url, type, body: readFileSync(new URL(name, PAGE_DIR)) }];
  });
}

/** The webhook portal's page and its assets: public, read once, under a strict Content-Security-Policy. */
const routes: FastifyPluginAsync = async (app) => {
  const files = readPage();
  // Weak: a tag per body, computed on the way out, and compared when the browser revalidates.
  await app.register(etag, { weak: true });
  // After security-headers' `no-store`, which stays on errors.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.statusCode === 200 || reply.statusCode === 304) reply.header('cache-control', CACHE);
    done(null, payload);
  });
  for (const file of files) {
    app.get(file.url, { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
      reply.headers(HEADERS).type(file.type).send(file.body),
    );
  }
};

// Encapsulated: the hooks above must apply to this plugin's routes only.
export const portalPage = fp(routes, { name: 'portal-page', encapsulate: true });
