import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from './error-codes.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * JSON bodies, strictly: UTF-8 only (RFC 8259), so a byte that is not UTF-8 is refused rather than
 * stored as U+FFFD; no content coding (a body labelled gzip would otherwise be read as plain text);
 * and no `__proto__` or `constructor.prototype` keys, with a message that says so.
 */
function parseJson(request: FastifyRequest, body: Buffer): unknown {
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new ApiError('unsupported_media_type', 'request bodies must not be content-encoded (no Content-Encoding)');
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new ApiError('unsupported_media_type', `JSON bodies must be UTF-8, not ${charset.slice(0, 40)}`);
  }
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new ApiError('invalid_request', 'the request body is not valid UTF-8');
  }
  if (text.trim() === '') throw new ApiError('invalid_request', 'the request body is empty; send a JSON object');
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    if (/prototype/.test((error as Error).message)) {
      throw new ApiError(
        'invalid_request',
        'the request body must not contain "__proto__" or "constructor.prototype" keys',
      );
    }
    throw new ApiError('invalid_request', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Replaces Fastify's JSON parsers (application/json, and merge patches for PATCH). */
export function installJsonBodies(app: FastifyInstance): void {
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
}
