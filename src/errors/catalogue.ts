import { BODY_LIMIT_BYTES } from '../domain/limits.js';
import { NAME_MAX_CHARS } from '../domain/pet-name.js';
import type { ErrorCode } from '../schemas/error-codes.js';
import { type ApiError, errorKind } from './api-error.js';
import { urlRefusal } from './url-refusal-message.js';

/** RFC 6750 challenge on every 401; `error="invalid_token"` when a bearer token was sent. */
const REALM = 'Bearer realm="petstore"';
/** What a client is told to wait when the database is away: long enough for a restart or fail-over. */
const STORE_RETRY_AFTER = { 'retry-after': '5' };
/** A full disk is freed by an operator, not in seconds. */
const STORE_FULL_RETRY_AFTER = { 'retry-after': '30' };
/** A moment: another request of the same client finishing, or another instance taking over. */
const SHORT_RETRY_AFTER = { 'retry-after': '1' };
const retryAfter = (seconds: number) => ({ 'retry-after': String(seconds) });
/** A slot frees when a stream closes, which no one can foresee: a few seconds, so clients wait, not hammer. */
const STREAM_RETRY_AFTER = { 'retry-after': '5' };

/**
 * Every error the API answers: code, message template and fixed headers, in one place. Routes, hooks, the
 * error handler and the OpenAPI examples all take their errors from here; nothing else writes a message.
 * `where` arguments name a field or parameter as the message shows it (`body.name`, `query parameter "limit"`).
 */
export const ERRORS = {
  // The request itself (400, 413, 415).
  malformedHttp: errorKind('invalid_request', () => 'the request is not valid HTTP/1.1'),
  headersTooLarge: errorKind('invalid_request', () => 'the request headers are too large'),
  badUrl: errorKind('invalid_request', () => 'the URL is not valid (bad percent-encoding)'),
  required: errorKind('invalid_request', (where: string) => `${where} is required`),
  bodyRequired: errorKind('invalid_request', () => 'a JSON object body is required'),
  unknownQueryParameter: errorKind('invalid_request', (name: string) => `unknown query parameter "${name}"`),
  unknownField: errorKind('invalid_request', (where: string, field: string) => `${where} has unknown field "${field}"`),
  idSent: errorKind('invalid_request', () => 'body.id must not be sent: the service assigns it'),
  repeated: errorKind('invalid_request', (where: string) => `${where} must be given at most once`),
  notOneOf: errorKind(
    'invalid_request',
    (where: string, allowed: readonly unknown[]) => `${where} must be one of: ${allowed.join(', ')}`,
  ),
  wrongType: errorKind(
    'invalid_request',
    (where: string, type: string) => `${where} must be ${type === 'integer' ? 'an integer' : `of type ${type}`}`,
  ),
  tooShort: errorKind(
    'invalid_request',
    (where: string, min: number) => `${where} must have at least ${min} ${min === 1 ? 'character' : 'characters'}`,
  ),
  tooLong: errorKind('invalid_request', (where: string, max: number) => `${where} must have at most ${max} characters`),
  tooFewItems: errorKind(
    'invalid_request',
    (where: string, min: number) => `${where} must have at least ${min} ${min === 1 ? 'item' : 'items'}`,
  ),
  repeatedItem: errorKind('invalid_request', (where: string, item: string) => `${where} lists ${item} more than once`),
  noField: errorKind(
    'invalid_request',
    (where: string, fields: readonly string[]) => `${where} must contain at least one of: ${fields.join(', ')}`,
  ),
  beyondJsonIntegers: errorKind(
    'invalid_request',
    (where: string, max: number) =>
      `${where} must be <= ${max} (2^53 - 1, the largest integer JSON clients represent exactly)`,
  ),
  /** A schema rule in its own words (`must be <= 100`, or a pattern's stated rule). */
  brokenRule: errorKind('invalid_request', (where: string, rule: string) => `${where} ${rule}`),
  blankName: errorKind(
    'invalid_request',
    () => 'body.name must contain a character other than white space and invisible characters',
  ),
  nameTooLong: errorKind(
    'invalid_request',
    (max: number, chars: number) => `body.name must have at most ${max} characters after trimming (it has ${chars})`,
  ),
  unknownCursor: errorKind('invalid_request', () => 'query parameter "cursor" is not a cursor this service issued'),
  cursorForOtherFilter: errorKind(
    'invalid_request',
    (issuedFor: string) => `query parameter "cursor" was issued for ${issuedFor}; send it with the same filters`,
  ),
  unknownLastEventId: errorKind('invalid_request', () => 'header "Last-Event-ID" is not an event id this service sent'),
  lastEventIdForOtherType: errorKind(
    'invalid_request',
    (sentWith: string) =>
      `header "Last-Event-ID" was sent by a stream with ${sentWith}; send it with the same type filter`,
  ),
  eventCursorForOtherType: errorKind(
    'invalid_request',
    (issuedFor: string) => `query parameter "cursor" was issued for ${issuedFor}; send it with the same type filter`,
  ),
  webhookUrlRefused: errorKind('invalid_request', urlRefusal),
  sinceAfterUntil: errorKind('invalid_request', () => 'body.since must not be after body.until'),
  sinceBeyondRetention: errorKind(
    'invalid_request',
    (days: number) => `body.since must be within the last ${days} days (EVENT_RETENTION_DAYS): older events are gone`,
  ),
  invalidIdempotencyKey: errorKind(
    'invalid_request',
    () => 'header "Idempotency-Key" must be one string of 1 to 255 printable ASCII characters',
  ),
  /** Neither `*` nor entity tags (RFC 9110, 13.1.1): read as a condition, a pet that never changed would be 412. */
  malformedIfMatch: errorKind(
    'invalid_request',
    (got: string) =>
      `header "If-Match" must be "*" or entity tags in double quotes, such as "2" (got ${got.slice(0, 100)})`,
  ),
  bodyNotUtf8: errorKind('invalid_request', () => 'the request body is not valid UTF-8'),
  emptyBody: errorKind('invalid_request', () => 'the request body is empty; send a JSON object'),
  prototypeKeys: errorKind(
    'invalid_request',
    () => 'the request body must not contain "__proto__" or "constructor.prototype" keys',
  ),
  invalidJson: errorKind('invalid_request', (detail: string) => `the request body is not valid JSON: ${detail}`),
  /** Fastify's own refusal of a request, in its words, under the code of its status. */
  refusedByFramework: (code: ErrorCode, message: string) => errorKind(code, () => message),
  bodyTooLarge: errorKind(
    'payload_too_large',
    () => `the request body must not be larger than ${BODY_LIMIT_BYTES / 1024} KiB`,
  ),
  notJson: errorKind('unsupported_media_type', () => 'the request body must be application/json'),
  contentEncoded: errorKind(
    'unsupported_media_type',
    () => 'request bodies must not be content-encoded (no Content-Encoding)',
  ),
  notUtf8Charset: errorKind(
    'unsupported_media_type',
    (charset: string) => `JSON bodies must be UTF-8, not ${charset.slice(0, 40)}`,
  ),

  // Who is asking (401, 403, 429).
  keyMissing: errorKind('unauthorized', () => 'an API key is required: send "Authorization: Bearer <key>"', {
    'www-authenticate': REALM,
  }),
  /** Another scheme, or a key alone: no bearer token was sent, so RFC 6750 gives no error code. */
  keySchemeMissing: errorKind(
    'unauthorized',
    () => 'the Authorization header must use the Bearer scheme: send "Authorization: Bearer <key>"',
    { 'www-authenticate': REALM },
  ),
  /** Told apart without a lookup (shape and checksum), so it never says whether a key exists. */
  keyMalformed: errorKind(
    'unauthorized',
    () =>
      'the API key is not well-formed: a key is "psk_" and 36 letters or digits, with a checksum that catches typos',
    { 'www-authenticate': `${REALM}, error="invalid_token"` },
  ),
  /** A well-formed key refused: one message whether it never existed, was revoked or expired. */
  keyInvalid: errorKind('unauthorized', () => 'the API key is invalid, expired or revoked', {
    'www-authenticate': `${REALM}, error="invalid_token"`,
  }),
  /** One message whether the link expired, was used already, was altered or its key was revoked. */
  portalLinkRefused: errorKind(
    'unauthorized',
    () => 'this portal link has expired, was used already, or its key was revoked; ask for a new link',
  ),
  portalSessionMissing: errorKind(
    'unauthorized',
    () => 'no portal session, or it has ended; open a new portal link to start one',
  ),
  portalWebhooksOnly: errorKind(
    'forbidden',
    () => "a portal session manages its owner's webhook endpoints only; use an API key for anything else",
  ),
  /** `origin` is the service's own (PUBLIC_URL's, or the request's), never the one the request sent. */
  portalOtherOrigin: errorKind(
    'forbidden',
    (origin: string) =>
      `a portal request that changes something is accepted only from the portal's own page (${origin}): ` +
      `it must carry "Origin: ${origin}" or "Sec-Fetch-Site: same-origin", as the page's browser sends`,
  ),
  scopeMissing: errorKind(
    'forbidden',
    (scope: string) => `this API key lacks the "${scope}" scope this operation needs`,
  ),
  otherOwner: errorKind(
    'forbidden',
    (owner: string) => `this API key acts for owner "${owner}" only; naming another owner needs the "admin" scope`,
  ),
  keyOverLimit: errorKind(
    'rate_limited',
    (seconds: number) => `this API key is over its rate limit; retry after ${seconds} s`,
    retryAfter,
  ),
  portalOverLimit: errorKind(
    'rate_limited',
    (seconds: number) => `this owner's portal sessions are over their rate limit; retry after ${seconds} s`,
    retryAfter,
  ),
  streamsPerOwner: errorKind(
    'rate_limited',
    (limit: number) =>
      `this API key's owner already has ${limit} event streams open, all its keys together, the most it may ` +
      '(EVENT_STREAMS_PER_OWNER); close one first',
    STREAM_RETRY_AFTER,
  ),
  streamsPerProcess: errorKind(
    'rate_limited',
    (limit: number) => `this server already serves ${limit} event streams, the most it may; retry later`,
    STREAM_RETRY_AFTER,
  ),
  addressOverLimit: errorKind(
    'rate_limited',
    (seconds: number) => `too many failed authentications from this address; retry after ${seconds} s`,
    retryAfter,
  ),

  // What it asks for (404, 405, 409, 410, 412, 422).
  noRoute: errorKind('not_found', (method: string, path: string) => `no route for ${method} ${path}`),
  petNotFound: errorKind('not_found', (id: number) => `pet ${id} does not exist`),
  orderNotFound: errorKind('not_found', (id: number) => `order ${id} does not exist`),
  webhookNotFound: errorKind('not_found', (id: number) => `webhook endpoint ${id} does not exist`),
  eventNotKept: errorKind(
    'not_found',
    (id: string) => `event ${id} does not exist: never recorded, or removed after EVENT_RETENTION_DAYS`,
  ),
  eventNotSubscribed: errorKind(
    'not_found',
    (webhookId: number, id: string, type: string) =>
      `webhook endpoint ${webhookId} is not subscribed to ${type}, the type of event ${id}`,
  ),
  methodNotAllowed: errorKind(
    'method_not_allowed',
    (method: string, allow: string) => `${method} is not allowed here; allowed: ${allow}`,
    (_method: string, allow: string) => ({ allow }),
  ),
  endpointsPerOwner: errorKind(
    'conflict',
    (owner: string, bound: number) =>
      `owner "${owner}" has ${bound} webhook endpoints, the most it may (WEBHOOK_ENDPOINTS_PER_OWNER); delete one first`,
  ),
  petNotAvailable: errorKind('conflict', (id: number, status: string) => `pet ${id} is ${status}, not available`),
  orderMoveRefused: errorKind(
    'conflict',
    (from: string, to: string, next: readonly string[]) =>
      `an order cannot move from ${from} to ${to}; ` +
      (next.length === 0 ? `${from} is final` : `from ${from} it can move to: ${next.join(', ')}`),
  ),
  petStatusHeld: errorKind(
    'conflict',
    (id: number, orderId: number, orderStatus: string) =>
      `the status of pet ${id} cannot change while order ${orderId} (${orderStatus}) holds it; ` +
      'move or cancel the order instead',
  ),
  petDeleteHeld: errorKind(
    'conflict',
    (id: number, orderId: number, orderStatus: string) =>
      `pet ${id} cannot be deleted while order ${orderId} (${orderStatus}) holds it; cancel or deliver the order first`,
  ),
  idempotencyInFlight: errorKind(
    'conflict',
    () => 'a request with this Idempotency-Key is still in progress; retry shortly',
    SHORT_RETRY_AFTER,
  ),
  removed: errorKind(
    'gone',
    (operation: string, on: string, successor: string) => `${operation} was removed on ${on}; use ${successor}`,
  ),
  eventsExpired: errorKind(
    'gone',
    (days: number) =>
      `events after this cursor were removed (events are kept ${days} days); read the feed again without a cursor`,
  ),
  eventsRestored: errorKind(
    'gone',
    () =>
      'the database was restored from a backup made before this cursor: the events after it were lost; ' +
      'read the feed again without a cursor',
  ),
  petChanged: errorKind(
    'precondition_failed',
    (id: number, etag: string) =>
      `pet ${id} has changed: its ETag is now ${etag}, which "If-Match" does not name; read it again and decide anew`,
  ),
  idempotencyMismatch: errorKind(
    'idempotency_mismatch',
    () => 'this Idempotency-Key was already used with a different request; use a new key for a new request',
  ),

  // The service (500, 503).
  internal: errorKind('internal_error', (requestId: string) => `internal error; quote request id ${requestId}`),
  storeUnavailable: errorKind(
    'service_unavailable',
    () => 'the database is unavailable; retry shortly',
    STORE_RETRY_AFTER,
  ),
  storeUnreachable: errorKind('service_unavailable', () => 'the database is not reachable', STORE_RETRY_AFTER),
  /** Reads still work; writes need an operator to free space, so the client may retry but not at once. */
  storeFull: errorKind(
    'service_unavailable',
    () => 'the database cannot write: its disk is full; reads still work, retry writes later',
    STORE_FULL_RETRY_AFTER,
  ),
  shuttingDown: errorKind('service_unavailable', () => 'the server is shutting down', SHORT_RETRY_AFTER),
} as const;

/**
 * When each kind is answered, in the words of docs/errors.md's row for its code: test/unit/errors-doc.test.ts
 * fails when the row leaves a use out. A new kind needs its phrase here and in that row. Fastify's own
 * refusals have no code of their own (theirs is their status's), so they have no row to be told in.
 */
export const ERROR_USES: Readonly<Record<Exclude<keyof typeof ERRORS, 'refusedByFramework'>, string>> = {
  malformedHttp: 'not valid HTTP/1.1',
  headersTooLarge: 'headers larger than 16 KiB',
  badUrl: 'a URL that does not decode',
  required: 'a missing or invalid field',
  bodyRequired: 'a body absent where one is required',
  unknownQueryParameter: 'repeated or unknown parameter',
  unknownField: 'unknown field',
  idSent: 'a client-sent `id`',
  repeated: 'repeated or unknown parameter',
  notOneOf: 'not one of the allowed values',
  wrongType: 'of the wrong type',
  tooShort: 'too short',
  tooLong: 'too long',
  tooFewItems: 'a list with too few items',
  repeatedItem: 'an item twice',
  noField: 'a change of a webhook endpoint with no field',
  beyondJsonIntegers: 'an integer beyond 2^53 − 1',
  brokenRule: 'another rule of its schema',
  blankName: 'a pet name with no visible character',
  nameTooLong: `longer than ${NAME_MAX_CHARS} characters once trimmed`,
  unknownCursor: 'a cursor the service did not issue',
  cursorForOtherFilter: 'sent with other filters than it was issued for',
  unknownLastEventId: 'the same for the header `Last-Event-ID`',
  lastEventIdForOtherType: 'the same for the header `Last-Event-ID`',
  eventCursorForOtherType: 'sent with other filters than it was issued for',
  webhookUrlRefused: 'a webhook URL the service will not call',
  sinceAfterUntil: 'whose `since` is after its `until`',
  sinceBeyondRetention: 'older than `EVENT_RETENTION_DAYS`',
  invalidIdempotencyKey: 'an `Idempotency-Key` header that is not 1 to 255 printable ASCII characters',
  malformedIfMatch: 'an `If-Match` header that is neither `*` nor entity tags in double quotes',
  bodyNotUtf8: 'a body not valid UTF-8',
  emptyBody: 'an empty body',
  prototypeKeys: '`__proto__` or `constructor.prototype` keys',
  invalidJson: 'malformed JSON',
  bodyTooLarge: `larger than ${BODY_LIMIT_BYTES / 1024} KiB`,
  notJson: 'not `application/json`',
  contentEncoded: 'a `Content-Encoding`',
  notUtf8Charset: 'a charset other than UTF-8',
  keyMissing: 'no API key',
  keySchemeMissing: 'a header without the Bearer scheme',
  keyMalformed: 'a key that is malformed',
  keyInvalid: 'unknown, revoked or expired',
  portalLinkRefused: 'a portal link that expired, was used already, was altered or whose key was revoked',
  portalSessionMissing: 'without a live session',
  portalWebhooksOnly:
    "a portal session asking for anything but its owner's webhook endpoints, its audit log and one event",
  portalOtherOrigin: 'a change under `/portal` sent from another origin, or not saying where it comes from',
  scopeMissing: 'lacks the scope the operation needs',
  otherOwner: 'a key without `admin` naming another owner',
  keyOverLimit: 'too many requests for this key',
  portalOverLimit: "or for an owner's portal sessions",
  streamsPerOwner: '`EVENT_STREAMS_PER_OWNER`',
  streamsPerProcess: '`EVENT_STREAMS`',
  addressOverLimit: 'too many failed authentications from this address',
  noRoute: 'no such route',
  petNotFound: 'no such pet',
  orderNotFound: 'or order (including the `petId` of a new order)',
  webhookNotFound: 'no such webhook endpoint',
  eventNotKept: 'no such event to read or resend',
  eventNotSubscribed: 'an event of a type the endpoint is not subscribed to',
  methodNotAllowed: 'not with this method',
  endpointsPerOwner: 'an owner at its bound of webhook endpoints',
  petNotAvailable: 'ordering a pet that is not `available`',
  petStatusHeld: 'changing the status of a pet',
  petDeleteHeld: 'deleting it while an order holds it',
  orderMoveRefused: 'an order move the state machine does not allow',
  idempotencyInFlight: 'an `Idempotency-Key` whose first request is still running',
  removed: 'the operation has passed its sunset',
  eventsExpired: 'removed by retention',
  eventsRestored: 'history a restore from a backup lost',
  idempotencyMismatch: 'an `Idempotency-Key` reused with a different body',
  petChanged: "with an `If-Match` that names none of the pet's current `ETag`",
  internal: 'a fault of the service',
  storeUnavailable: 'did not answer within the time-outs',
  storeUnreachable: 'the database is unreachable',
  storeFull: 'its disk is full',
  shuttingDown: 'the server is shutting down',
};

/** The example of each error response in the OpenAPI document: a real message of that code. */
export const ERROR_EXAMPLES: Readonly<Record<ErrorCode, ApiError>> = {
  invalid_request: ERRORS.brokenRule.create('query parameter "limit"', 'must be <= 100'),
  unauthorized: ERRORS.keyInvalid.create(),
  forbidden: ERRORS.scopeMissing.create('write'),
  not_found: ERRORS.petNotFound.create(42),
  method_not_allowed: ERRORS.methodNotAllowed.create('PUT', 'GET, HEAD, POST'),
  conflict: ERRORS.petNotAvailable.create(42, 'pending'),
  gone: ERRORS.removed.create('GET /v1/pets/:petId', '2030-12-05', '/v1/pets'),
  precondition_failed: ERRORS.petChanged.create(42, '"3"'),
  payload_too_large: ERRORS.bodyTooLarge.create(),
  unsupported_media_type: ERRORS.notJson.create(),
  idempotency_mismatch: ERRORS.idempotencyMismatch.create(),
  rate_limited: ERRORS.keyOverLimit.create(1),
  internal_error: ERRORS.internal.create('4f1c2a9e-2b7d-4c55-9a57-0d6a3e1b8c21'),
  service_unavailable: ERRORS.storeUnavailable.create(),
};
