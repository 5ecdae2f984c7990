import { createHash } from 'node:crypto';
import type { SwaggerTransform } from '@fastify/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ifMatchVersions, ifNoneMatchHits } from '../domain/entity-tags.js';
import { ERRORS } from '../errors/catalogue.js';

const ETAG_DESCRIPTION =
  "The animal's version (RFC 9110 entity tag, strong): send it back as `If-Match` to change or delete the animal " +
  'only if nothing changed it since, or as `If-None-Match` to be told 304 while it is unchanged.';

/** The `ETag` of an answer that is one pet. */
export const ETAG_HEADER = { ETag: { type: 'string', description: ETAG_DESCRIPTION } };

/** The `ETag` of a page: weak, since only the page's content is compared, not its bytes. */
export const PAGE_ETAG_HEADER = {
  ETag: {
    type: 'string',
    description:
      'A weak entity tag of the page (`W/"…"`): send it as `If-None-Match` to be told 304 while the page is unchanged.',
  },
};

export const IfMatchHeader = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      description:
        'Change only if the animal is still at this version: its `ETag` (strong; `W/` tags never match), a ' +
        'list of them, or `*` (any). Otherwise 412 and nothing changes. Without it the change applies. ' +
        'Anything else (a tag without its double quotes, `*` in a list) is 400 and nothing changes.',
    }),
  ),
});

/**
 * The versions the request's `If-Match` names (ifMatchVersions): undefined asks nothing. A field that is
 * neither `*` nor entity tags is 400, before anything is compared.
 */
export function ifMatchOf(request: FastifyRequest): readonly number[] | undefined {
  const field = request.headers['if-match'];
  const versions = ifMatchVersions(field);
  if (versions === 'malformed') throw ERRORS.malformedIfMatch.create(field ?? '');
  return versions;
}

const IfNoneMatchHeader = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description:
        'Answer 304 without a body while the `ETag` is one of these (or `*`). A field that is neither is ' +
        'ignored: the full answer is sent.',
    }),
  ),
});

/**
 * A GET route's `config.swaggerTransform`: lists `If-None-Match` in the document, with no validator. Any
 * value is accepted (a malformed one names nothing), so validating it would only cost every request:
 * measured, 1 % of list-20's instructions per request.
 */
export const documentIfNoneMatch: SwaggerTransform = ({ schema, url }) => ({
  schema: { ...schema, headers: IfNoneMatchHeader },
  url,
});

/** The 304 a GET answers to a matching `If-None-Match`. */
export const notModified = (what: string) =>
  Type.Null({
    description: `Not modified: ${what} still has the \`ETag\` \`If-None-Match\` names; no body.`,
    headers: { ETag: { type: 'string', description: 'The unchanged entity tag.' } },
  });

/**
 * Sets `ETag` on the answer and, when the request's `If-None-Match` names it, answers 304: true then, and
 * the route sends nothing else.
 */
export function notModifiedSent(request: FastifyRequest, reply: FastifyReply, tag: string): boolean {
  reply.header('etag', tag);
  if (!ifNoneMatchHits(request.headers['if-none-match'], tag)) return false;
  reply.code(304).send();
  return true;
}

/** A page's weak entity tag: a digest of what the page sends, its body and its `Link`. */
export function pageTag(body: string, link: string | undefined): string {
  const digest = createHash('sha256')
    .update(body)
    .update(link ?? '')
    .digest('base64url');
  return `W/"${digest.slice(0, 22)}"`;
}
