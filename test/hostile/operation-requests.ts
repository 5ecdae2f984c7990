import fc from 'fast-check';
import { bodyText } from './body-generators.js';
import {
  type AuthChoice,
  authorization,
  type ContentTypeChoice,
  contentType,
  headerParameters,
} from './header-generators.js';
import type { Operation } from './openapi-operations.js';
import { described, type HostileRequest, hasControl } from './requests.js';
import { BODY_LIMIT, NODE_MAX_HEADER_BYTES } from './settings.js';
import { query, segment } from './url-generators.js';
import type { World } from './world.js';

/** Requests for one operation of the document: its own method, path, query, headers and body, each maybe hostile. */

export const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Does fetch keep this path as it is? It resolves dot segments (also `%2e`) and rewrites some characters. */
export function fetchKeeps(target: string): boolean {
  const path = target.split('?')[0] ?? '';
  return !/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path) && new URL(target, 'http://x').pathname === path;
}

export function buildRequest(
  operation: Operation,
  parts: {
    method: string;
    segments: readonly string[];
    query: string;
    body: string | undefined;
    auth: AuthChoice;
    contentType: ContentTypeChoice;
    raw: boolean;
    extraHeaders?: ReadonlyArray<readonly [string, string]>;
  },
): HostileRequest {
  let index = 0;
  const path = operation.template.replace(/\{[^}]+\}/g, () => parts.segments[index++] ?? '1');
  const target = path + parts.query;
  const headers: Array<readonly [string, string]> = [];
  if (parts.auth.header !== undefined) headers.push(['Authorization', parts.auth.header]);
  const body = parts.body === undefined ? undefined : Buffer.from(parts.body, 'utf8');
  if (body !== undefined && parts.contentType.value !== undefined)
    headers.push(['Content-Type', parts.contentType.value]);
  headers.push(...(parts.extraHeaders ?? []));
  const raw =
    parts.raw || !fetchKeeps(target) || (body !== undefined && (parts.method === 'GET' || parts.method === 'HEAD'));
  // What the service promises (docs/decisions/order-of-checks.md) whatever else is wrong: 401 first, then 403, then 415 and 413 for a body.
  const ownMethod = parts.method === operation.method;
  let expect: number | undefined;
  if (parts.auth.scopes === undefined) expect = 401;
  else if (ownMethod && !parts.auth.scopes.includes(operation.scopes)) expect = 403;
  else if (ownMethod && operation.body !== undefined && body !== undefined && body.length > 0) {
    if (parts.contentType.json === false) expect = 415;
    else if (parts.contentType.json === true && body.length > BODY_LIMIT) expect = 413;
  }
  // Past Node's 16 KiB limit on the request line and headers (fetch adds ~300 bytes of its own), or with
  // control characters in a header value, Node's parser refuses the request before the app sees it.
  const headBytes = target.length + headers.reduce((sum, [name, v]) => sum + name.length + v.length + 4, 0) + 512;
  const protocolValid = headBytes < NODE_MAX_HEADER_BYTES && !headers.some(([, v]) => hasControl(v));
  return described({
    method: parts.method,
    target,
    headers,
    ...(body === undefined ? {} : { body }),
    raw,
    protocolValid,
    ...(expect === undefined || !protocolValid ? {} : { expect }),
  });
}

export function operationRequest(world: World, operation: Operation): fc.Arbitrary<HostileRequest> {
  const body =
    operation.body === undefined
      ? fc.oneof(
          { weight: 8, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.constantFrom('{}', '{"a":', 'x') },
        )
      : fc.oneof(
          { weight: 12, arbitrary: bodyText(world.doc, operation.body) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        );
  return fc
    .record({
      method: fc.oneof(
        { weight: 10, arbitrary: fc.constant(operation.method) },
        { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) },
      ),
      segments: fc.tuple(...operation.pathParameters.map((parameter) => segment(parameter.schema))),
      query: fc.oneof(
        { weight: operation.queryParameters.length > 0 ? 6 : 1, arbitrary: query(world, operation) },
        { weight: operation.queryParameters.length > 0 ? 1 : 6, arbitrary: fc.constant('') },
      ),
      body,
      auth: authorization(world),
      contentType,
      extraHeaders: headerParameters(operation),
      raw: fc.boolean(),
    })
    .map((parts) => buildRequest(operation, parts));
}
