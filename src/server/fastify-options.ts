import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { BODY_LIMIT_BYTES } from '../domain/limits.js';
import { frameworkErrors } from '../errors/error-handler.js';
import { requestIdOf } from '../observability/request-id.js';
import { RequestLog } from '../observability/request-log.js';
import { serializerFactory } from '../schema-compilers/serializer-factory.js';
import { clientErrorHandler } from './client-error.js';
import { LINGERING_CLOSE_BYTES, LINGERING_CLOSE_MS } from './lingering-close.js';
import { capConnectionsPerAddress } from './per-address-connections.js';

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
  /** Connections one client address (IPv6: its /64) may hold open at once; more are closed unanswered. */
  readonly maxConnectionsPerAddress: number;
  /** An idle keep-alive connection (HTTP/1) or HTTP/2 session is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** After an answer sent before the request's body arrived, the rest is read this long at most… */
  readonly lingeringCloseMs: number;
  /** …and this many bytes at most; then the connection is closed. */
  readonly lingeringCloseBytes: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  timeoutCheckIntervalMs: 1000,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 10_000,
  // A tenth of the process: one host cannot fill it, a NAT gateway of many clients still fits.
  maxConnectionsPerAddress: 1000,
  // Above the 60 s idle time-out of nginx's upstream keep-alive and AWS load balancers, so the proxy
  // closes an idle connection first and never sends a request on one this side is closing.
  keepAliveTimeoutMs: 65_000,
  lingeringCloseMs: LINGERING_CLOSE_MS,
  lingeringCloseBytes: LINGERING_CLOSE_BYTES,
};

export interface Transport {
  readonly limits: ServerLimits;
  /** PEM certificate and key: HTTPS, HTTP/2 with HTTP/1.1 fallback. Plain HTTP/1.1 when absent. */
  readonly tls: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  readonly logger: FastifyServerOptions['logger'];
  /** Proxies whose X-Forwarded-For is believed, so request.ip is the client behind them. */
  readonly trustProxy: readonly string[];
}

/** Fastify's options for the service: the server it creates, its limits, and its request log and ids. */
export function fastifyOptions({ limits, tls, logger, trustProxy }: Transport): FastifyServerOptions {
  const server =
    tls === undefined
      ? {
          http: {
            // A request without Host is answered by the app (with the Error body), not by Node's bare 400.
            requireHostHeader: false,
            connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
            maxHeaderSize: limits.maxHeaderBytes,
          },
        }
      : {
          http2: true,
          https: { allowHTTP1: true, maxHeaderSize: limits.maxHeaderBytes, ...tls },
          http2SessionTimeout: limits.keepAliveTimeoutMs,
        };
  return {
    logger: logger ?? false,
    logController: new RequestLog(),
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT_BYTES,
    // The graceful-close plugin's 503 carries the Error body; Fastify's built-in one would not.
    return503OnClosing: false,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    clientErrorHandler,
    frameworkErrors,
    // Longer than any URL the header limit lets through: an over-long id is then refused by its schema.
    routerOptions: { maxParamLength: limits.maxHeaderBytes },
    schemaController: { compilersFactory: { buildSerializer: serializerFactory() } },
    // Only the listed proxies: trusting every hop would let any client choose its address.
    trustProxy: trustProxy.length === 0 ? false : [...trustProxy],
    ...server,
  } as FastifyServerOptions;
}

/** What Fastify's options do not set on the server it created. */
export function limitConnections(app: FastifyInstance, limits: ServerLimits): void {
  app.server.maxConnections = limits.maxConnections;
  app.server.headersTimeout = limits.headersTimeoutMs;
  // Fastify sets it on HTTP/1 servers only; the HTTP/1.1 fallback of the TLS server needs it too.
  (app.server as { keepAliveTimeout?: number }).keepAliveTimeout = limits.keepAliveTimeoutMs;
  capConnectionsPerAddress(app, limits.maxConnectionsPerAddress);
}
