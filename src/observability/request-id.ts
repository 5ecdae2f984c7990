import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';

const REQUEST_ID_HEADER = 'x-request-id';
/** Printable ASCII without spaces, as tracing systems send; anything else is replaced, not refused. */
const ACCEPTED_REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

/** Fastify's `genReqId`: the caller's X-Request-Id when it is sane, else a new UUID. */
export function requestIdOf(raw: IncomingMessage): string {
  const sent = raw.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && ACCEPTED_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** Echoes the request id on every response, errors included, so a caller can quote it. */
export const requestId = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      done();
    });
  },
  { name: 'request-id' },
);
