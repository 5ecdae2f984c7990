import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import { ERRORS } from '../errors/catalogue.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * JSON bodies, strictly: UTF-8 only (RFC 8259), so a byte that is not UTF-8 is refused rather than
 * stored as U+FFFD; no content coding (a body labelled gzip would otherwise be read as plain text);
 * and no `__proto__` or `constructor.prototype` keys, with a message that says so.
 */
function parseJson(request: FastifyRequest, body: Buffer): unknown {
  // Clients that always send a JSON content type send it with no body too: for an operation that takes none,
  // or whose body may be left out, that is no body.
  if (body.length === 0 && takesNoBody(request)) return undefined;
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw ERRORS.contentEncoded.create();
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw ERRORS.notUtf8Charset.create(charset);
  }
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw ERRORS.bodyNotUtf8.create();
  }
  if (text.trim() === '') throw ERRORS.emptyBody.create();
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    if (/prototype/.test((error as Error).message)) {
      throw ERRORS.prototypeKeys.create();
    }
    throw ERRORS.invalidJson.create((error as Error).message);
  }
}

function takesNoBody(request: FastifyRequest): boolean {
  return request.routeOptions.config.optionalBody === true || request.routeOptions.schema?.body === undefined;
}

/** JSON bodies only: replaces Fastify's parsers (which would also take text/plain); PATCH may send merge patches (RFC 7396). */
export const jsonBodies = fp(
  async (app: FastifyInstance) => {
    app.removeContentTypeParser(['application/json', 'text/plain']);
    for (const type of ['application/json', 'application/merge-patch+json']) {
      app.addContentTypeParser(type, { parseAs: 'buffer' }, (request, body, done) => {
        try {
          done(null, parseJson(request, body as Buffer));
        } catch (error) {
          done(error as Error, undefined);
        }
      });
    }
  },
  { name: 'json-body' },
);
