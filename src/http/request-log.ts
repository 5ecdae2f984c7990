import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HookHandlerDoneFunction,
  LogController,
} from 'fastify';
import fp from 'fastify-plugin';
import { operationOf } from './operation.js';

export const REQUEST_ID_HEADER = 'x-request-id';
/** Printable ASCII without spaces, as tracing systems send; anything else is replaced, not refused. */
const ACCEPTED_REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

/** Fastify's `genReqId`: the caller's X-Request-Id when it is sane, else a new UUID. */
export function requestIdOf(raw: IncomingMessage): string {
  const sent = raw.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && ACCEPTED_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/**
 * Fastify's request log lines, replaced: one line per request when it completes, with the operation,
 * status, latency and the API key's id (never the key), under `requestId`. Fastify's default writes two
 * lines per request (and one more per unknown route) and carries neither the operation nor the key.
 */
export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        operation: operationOf(request),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        keyId: request.apiKey?.id,
        ...(error ? { err: error } : {}),
      },
      'request',
    );
  }
}

/** Echoes the request id on every response, errors included, so a caller can quote it. */
export const requestIdPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      done();
    });
  },
  { name: 'request-id' },
);
