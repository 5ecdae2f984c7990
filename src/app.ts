import { EventEmitter } from 'node:events';
import type { Http2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { docsRoutes } from './api/docs.js';
import { metaRoutes } from './api/meta.js';
import { orderRoutes } from './api/orders.js';
import { petRoutes } from './api/pets.js';
import { type Clock, systemClock } from './clock.js';
import { CursorCodec } from './domain/cursor.js';
import { authPlugin } from './http/auth.js';
import { ApiError, ERROR_CODES } from './http/error-codes.js';
import { installErrorReplies, sendError } from './http/error-reply.js';
import { Idempotency } from './http/idempotency.js';
import { installJsonBodies } from './http/json-body.js';
import { Links } from './http/links.js';
import { methodNotAllowed } from './http/method-not-allowed.js';
import { Metrics, metricsPlugin } from './http/metrics.js';
import { failedAuthLimitPlugin, keyRateLimitPlugin, type RateLimitOptions } from './http/rate-limit.js';
import { RequestLog, requestIdOf, requestIdPlugin } from './http/request-log.js';
import { validatorCompiler } from './http/validation.js';
import { ErrorBody } from './schemas/error.js';
import { NewOrder, Order, OrderStatus, OrderStatusChange } from './schemas/order.js';
import { NewPet, Pet, PetStatus } from './schemas/pet.js';
import type { Store } from './store/store.js';
import { timedStore } from './store/timed-store.js';

export interface AppOptions {
  readonly store: Store;
  readonly publicUrl?: string | undefined;
  readonly clock?: Clock;
  readonly logger?: FastifyServerOptions['logger'];
  readonly limits?: ServerLimits;
  /** Rate limiting; off when absent. */
  readonly rateLimit?: RateLimitOptions | undefined;
  /** A worker of `serve --workers N`: /metrics reports every worker's counts, gathered by the primary. */
  readonly metricsAcrossWorkers?: boolean;
  /** PEM certificate and key: the app then speaks HTTPS, HTTP/2 with HTTP/1.1 fallback, and sends HSTS. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
}

/** Limits against slow or greedy clients (slowloris, header floods, connection floods). */
export interface ServerLimits {
  /** The whole header block must arrive within this. */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** How often Node checks the two time-outs above. */
  readonly timeoutCheckIntervalMs: number;
  readonly maxHeaderBytes: number;
  readonly maxConnections: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  timeoutCheckIntervalMs: 1000,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 10_000,
};

/** Malformed HTTP still gets the Error body; a client too slow to send its request is cut off. */
function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.destroy();
    return;
  }
  const message =
    error.code === 'HPE_HEADER_OVERFLOW' ? 'the request headers are too large' : 'the request is not valid HTTP/1.1';
  const body = JSON.stringify({ code: 'invalid_request', message, status: 400 });
  socket.end(
    'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Fastify's own refusals before routing (a URL that does not decode): the Error body all the same. */
function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const message = error.code === 'FST_ERR_BAD_URL' ? 'the URL is not valid (bad percent-encoding)' : error.message;
  sendError(reply, new ApiError('invalid_request', message));
}

/** One year: browsers and clients remember to use HTTPS only (RFC 6797). */
const HSTS = 'max-age=31536000';

/** Schemas registered once: validation, serialisation and `components.schemas` of the OpenAPI document. */
const SHARED_SCHEMAS = [PetStatus, Pet, NewPet, OrderStatus, Order, NewOrder, OrderStatusChange, ErrorBody];
export const BODY_LIMIT_BYTES = 64 * 1024;
const INTERFACE_VERSION = '1.0.0';

/** Builds the service on a store. No I/O beyond the store; the caller decides whether to listen. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const clock = options.clock ?? systemClock;
  const metrics = new Metrics(() => options.store.poolStats());
  // The asynchronous log destination drops lines rather than grow without bound (src/logger.ts): count them.
  const logStream = (options.logger as { stream?: unknown } | undefined)?.stream;
  const logEvents = logStream instanceof EventEmitter ? logStream : undefined;
  const countDrop = () => metrics.logLinesDropped.inc();
  logEvents?.on('drop', countDrop);
  const store = timedStore(options.store, metrics.observeStoreCall);
  const links = new Links(options.publicUrl);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const nodeLimits = {
    // A request without Host is answered by the app (with the Error body), not by Node's bare 400.
    requireHostHeader: false,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
    maxHeaderSize: limits.maxHeaderBytes,
  };
  const transport =
    options.tls === undefined
      ? { http: nodeLimits }
      : { http2: true, https: { allowHTTP1: true, maxHeaderSize: limits.maxHeaderBytes, ...options.tls } };
  // Fastify types an HTTP/2 server differently; the routes use nothing that differs, so one type serves both.
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new RequestLog(),
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT_BYTES,
    // Our own 503 below carries the Error body; Fastify's built-in one would not.
    return503OnClosing: false,
    requestTimeout: limits.requestTimeoutMs,
    clientErrorHandler,
    frameworkErrors,
    // Longer than any URL the header limit lets through: an over-long id is then refused by its schema.
    routerOptions: { maxParamLength: limits.maxHeaderBytes },
    ...transport,
  } as FastifyServerOptions).withTypeProvider<TypeBoxTypeProvider>();

  app.server.maxConnections = limits.maxConnections;
  app.server.headersTimeout = limits.headersTimeoutMs;

  const securityHeaders: Record<string, string> = {
    // Responses carry account data: never cache them; never let a client guess another content type.
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...(options.tls === undefined ? {} : { 'strict-transport-security': HSTS }),
  };
  let closing = false;
  // Hooks with nothing to wait for take a callback: an async hook costs a promise and a microtask per request.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.headers(securityHeaders);
    // While stopping, every HTTP/1 response closes its connection: a keep-alive connection left idle
    // after the stop began would hold the server open. (HTTP/2 has no such header; GOAWAY does it.)
    if (closing && request.raw.httpVersionMajor === 1) reply.header('connection', 'close');
    done(null, payload);
  });

  // JSON only (Fastify would also parse text/plain); PATCH bodies may be merge patches (RFC 7396).
  installJsonBodies(app);
  app.setValidatorCompiler(validatorCompiler(SHARED_SCHEMAS));
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  installErrorReplies(app);

  // HTTP/2 clients keep sessions open; without a GOAWAY they would hold a graceful stop for the
  // session timeout. session.close() lets in-flight streams finish and refuses new ones.
  const sessions = new Set<Http2Session>();
  if (options.tls !== undefined) {
    app.server.on('session', (session: Http2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
    });
  }
  app.addHook('onClose', async () => {
    logEvents?.off('drop', countDrop);
  });
  app.addHook('preClose', async () => {
    closing = true;
    for (const session of sessions) session.close();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) {
      done();
      return;
    }
    // Answered here; not calling done() ends the request's hooks.
    sendError(
      reply,
      new ApiError('service_unavailable', 'the server is shutting down', { headers: { 'retry-after': '1' } }),
    );
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pet store',
        version: INTERFACE_VERSION,
        description:
          'The pet store service interface v1. Error codes: ' +
          `${Object.keys(ERROR_CODES).join(', ')}. Within /v1 changes are additive only; clients must ignore unknown fields.`,
      },
      servers: [{ url: links.to('/v1') }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'pets', description: 'The animals of the store.' },
        { name: 'store', description: "Orders: an extension of the interface's store area (`GET /store/orders`)." },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(requestIdPlugin);
  const routes = methodNotAllowed(app);
  await app.register(metricsPlugin, { metrics, acrossWorkers: options.metricsAcrossWorkers === true });
  const rateLimit = options.rateLimit === undefined ? undefined : { ...options.rateLimit, metrics };
  if (rateLimit !== undefined) {
    await rateLimit.limiter.ready();
    await app.register(failedAuthLimitPlugin, rateLimit);
  }
  await app.register(authPlugin, { store, clock });
  if (rateLimit !== undefined) await app.register(keyRateLimitPlugin, rateLimit);

  const secret = await store.secret('cursor');
  const idempotency = new Idempotency(clock);
  await app.register(metaRoutes, { store });
  await app.register(docsRoutes);
  await app.register(petRoutes, {
    store,
    idempotency,
    clock,
    cursors: new CursorCodec(secret, 'pets'),
    links,
  });
  await app.register(orderRoutes, {
    store,
    idempotency,
    clock,
    cursors: new CursorCodec(secret, 'orders'),
    links,
  });
  routes.answerOtherMethods();
  return app;
}
