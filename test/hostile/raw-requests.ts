import fc from 'fast-check';
import { junk, OBS_TEXT, VISIBLE_ASCII } from './header-generators.js';
import { words } from './json-generators.js';
import { described, type HostileRequest, hasControl } from './requests.js';
import { BODY_LIMIT } from './settings.js';
import type { World } from './world.js';

// ---------------------------------------------------------------------------------------------------------
// Raw HTTP/1.1: what fetch refuses to send
// ---------------------------------------------------------------------------------------------------------

export const RAW_TARGETS = [
  ...words(`
  /v1/pets /v1/pets/1 /v1/pets/../store/orders /v1/pets/%2e%2e/store/orders /v1/store/orders/..
  /v1/store/orders/. /v1/./pets //v1/pets /v1//pets /v1/pets/ /V1/PETS /v1/pets?limit=1&limit=2
  /v1/pets?limit=1#fragment /v1/pets;limit=1 http://evil.example/v1/pets * /healthz/..
  /v1/openapi.json/.. /v1 /v1/ / /docs /metrics /v2/pets
`),
];

export function rawRequest(world: World): fc.Arbitrary<HostileRequest> {
  const { keys } = world.h;
  const goodAuth: [string, string] = ['Authorization', `Bearer ${keys.all}`];
  const json: [string, string] = ['Content-Type', 'application/json'];
  const pet = Buffer.from('{"name":"raw","categoryId":1}');
  const make = (request: Omit<HostileRequest, 'raw'>) => described({ raw: true, ...request });
  return fc.oneof(
    // Authorization of 8 KiB (or more) of any bytes: a 401 while it is a legal field value.
    fc
      .tuple(
        fc.nat(),
        fc.integer({ min: 6_000, max: 9_000 }),
        fc.constantFrom(VISIBLE_ASCII, OBS_TEXT, VISIBLE_ASCII + OBS_TEXT, 'binary'),
      )
      .map(([seed, n, alphabet]) => {
        const text =
          alphabet === 'binary'
            ? junk(seed, n, Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join(''))
            : junk(seed, n, alphabet);
        const value = `Bearer ${text}`.replace(/[\r\n]/g, ' ');
        const legal = !hasControl(value) && value === value.trim();
        return make({
          method: 'GET',
          target: '/v1/pets',
          headers: [['Authorization', value]],
          protocolValid: legal,
          ...(legal ? { expect: 401 } : {}),
        });
      }),
    // Headers past Node's 16 KiB limit: 431 (or 400, or a closed connection).
    fc.integer({ min: 17_000, max: 40_000 }).map((n) =>
      make({
        method: 'GET',
        target: '/v1/pets',
        headers: [goodAuth, ['X-Junk', 'j'.repeat(n)]],
        protocolValid: false,
      }),
    ),
    fc.integer({ min: 60, max: 120 }).map((count) =>
      make({
        method: 'GET',
        target: '/v1/pets?limit=1',
        headers: [
          goodAuth,
          ...Array.from({ length: count }, (_, i) => [`X-H${i}`, 'v'.repeat(100)] as [string, string]),
        ],
        protocolValid: true,
        expect: 200,
      }),
    ),
    // Bad bytes in header names and values, line folding, bare LF, missing colon.
    fc
      .constantFrom<[string, string]>(
        ['Authorization', `Bearer ${keys.all}\u0000`],
        ['Authorization', `Bearer \u0000${keys.all}`],
        ['X-A', 'a\u0000b'],
        ['X-A', 'a\rb'],
        ['X-A', 'a\u007fb'],
        ['X A', 'b'],
        ['X\u0000A', 'b'],
        ['', 'b'],
        ['X-Ä', 'b'],
        ['X-A', 'a\r\n folded'],
        ['X-A:', 'b'],
        ['Content-Type', 'application/json\u0000'],
      )
      .map(([name, value]) =>
        make({
          method: 'POST',
          target: '/v1/pets',
          headers: [goodAuth, json, [name, value]],
          body: pet,
          protocolValid: false,
        }),
      ),
    fc.constantFrom('\n', '\r').map((eol) =>
      make({
        method: 'GET',
        target: `/v1/pets HTTP/1.1${eol}Host: x${eol}Authorization: Bearer ${keys.all}${eol}X-A: b`,
        headers: [],
        protocolValid: false,
      }),
    ),
    // Framing: duplicate or conflicting lengths, bad chunks, no Host.
    fc
      .constantFrom<Array<[string, string]>>(
        [
          ['Content-Length', '29'],
          ['Content-Length', '30'],
        ],
        [
          ['Content-Length', '29'],
          ['Transfer-Encoding', 'chunked'],
        ],
        [['Content-Length', '-1']],
        [['Content-Length', '1e2']],
        [['Content-Length', '+29']],
        [['Transfer-Encoding', 'gzip, chunked, identity']],
        [['Transfer-Encoding', 'chunked\u0000']],
      )
      .map((framing) =>
        make({
          method: 'POST',
          target: '/v1/pets',
          headers: [goodAuth, json, ...framing],
          body: pet,
          protocolValid: false,
        }),
      ),
    fc
      .constantFrom(
        'zz\r\n{}\r\n0\r\n\r\n',
        '-1\r\n',
        'ffffffffffffffffff\r\n{}',
        '2\r\n{}\r\n0\r\nX-Trailer: \u0000\r\n\r\n',
      )
      .map((chunks) =>
        make({
          method: 'POST',
          target: '/v1/pets',
          headers: [goodAuth, json, ['Transfer-Encoding', 'chunked']],
          body: Buffer.from(chunks, 'latin1'),
          protocolValid: false,
        }),
      ),
    // No Host: covered by its own test in raw-http.test.ts, which asks for the Error body.
    fc.constant(
      make({
        method: 'GET',
        target: '/v1/pets',
        headers: [goodAuth, ['Connection', 'close']],
        protocolValid: false,
        noHost: true,
        nodeAnswers: true,
      }),
    ),
    // Content-Type oddities and duplicates, which fetch would merge.
    fc
      .constantFrom<Array<[string, string]>>(
        [['Content-Type', 'application/json; charset=latin1']],
        [['Content-Type', 'APPLICATION/JSON']],
        [['Content-Type', 'application/json;;']],
        [['Content-Type', ' application/json ']],
        [['Content-Type', 'application/json; charset="\u00e9"']],
        [['Content-Type', '\u00ff/\u00ff']],
        [['Content-Type', '']],
        [['Content-Type', ';']],
        [['Content-Type', 'application']],
        [
          ['Content-Type', 'text/plain'],
          ['Content-Type', 'application/json'],
        ],
        [
          ['Content-Type', 'application/json'],
          ['Content-Type', 'text/plain'],
        ],
        [
          ['Authorization', 'Bearer junk'],
          ['Content-Type', 'application/json'],
        ],
        [],
      )
      .map((extra) => {
        const headers = extra.some(([name]) => name === 'Authorization') ? extra : [goodAuth, ...extra];
        return make({ method: 'POST', target: '/v1/pets', headers, body: pet, protocolValid: true });
      }),
    // A body on GET, HEAD and DELETE.
    fc
      .tuple(
        fc.constantFrom('GET', 'HEAD', 'DELETE', 'OPTIONS'),
        fc.constantFrom('{"a":', '{}', 'x'.repeat(BODY_LIMIT + 10)),
      )
      .map(([method, text]) =>
        make({ method, target: '/v1/pets', headers: [goodAuth, json], body: Buffer.from(text), protocolValid: true }),
      ),
    // Odd request targets (dot segments that fetch would resolve) and methods.
    fc
      .tuple(fc.constantFrom(...RAW_TARGETS), fc.boolean())
      .map(([target, authed]) =>
        make({ method: 'GET', target, headers: authed ? [goodAuth] : [], protocolValid: !target.includes('#') }),
      ),
    fc
      .tuple(
        fc.constantFrom('PROPFIND', 'TRACE', 'PURGE', 'SEARCH', 'REPORT', 'MKCOL'),
        fc.constantFrom('/v1/pets', '/v1/pets/1', '/healthz'),
      )
      .map(([method, target]) => make({ method, target, headers: [goodAuth], protocolValid: true })),
    fc
      .tuple(
        fc.constantFrom('FOO', 'get', 'G\u00c9T', 'CONNECT', 'GET\u0000', 'PATCH PATCH'),
        fc.constantFrom('/v1/pets', 'x:1'),
      )
      .map(([method, target]) => make({ method, target, headers: [goodAuth], protocolValid: false })),
    // Raw bytes that are not UTF-8 in the path and query.
    fc
      .constantFrom(
        '/v1/pets/\u00ff',
        '/v1/pets?status=\u00e9',
        '/v1/pets/\u0000',
        '/v1/pets?limit=1\u0000',
        '/v1/pets/ 1',
      )
      .map((target) => make({ method: 'GET', target, headers: [goodAuth], protocolValid: false })),
  );
}
