import type { FastifyReply, FastifyRequest } from 'fastify';
import { LogController } from 'fastify';
import { operationOf } from './operation.js';

/** Who asked: the key's id, or a portal session's owner (the session is not the key that made its link). */
function who(request: FastifyRequest): { keyId?: number; portal?: string } {
  const key = request.apiKey;
  if (!key) return {};
  return key.portalSession ? { portal: key.owner } : { keyId: key.id };
}

/**
 * Fastify's request log lines, replaced: one line per request when it completes, with the operation,
 * status, latency and who asked (the API key's id, never the key; a portal session's owner), under
 * `requestId`. Fastify's default writes two lines per request (and one more per unknown route) and carries
 * neither the operation nor the key.
 */
export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    this.#line(error, request, reply, {});
  }

  /**
   * A client that leaves a streamed response (a live event stream, above all) ends its request: Fastify
   * then writes no completion, so the request's line is written here, marked, instead of its
   * "stream closed prematurely". Other stream errors keep Fastify's warning.
   */
  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') {
      this.#line(undefined, request, reply, { closedByClient: true });
    } else {
      super.streamError(error, request, reply);
    }
  }

  #line(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, extra: object): void {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        operation: operationOf(request),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ...who(request),
        // The client's address: behind a proxy listed in TRUST_PROXY, the one it forwarded.
        ip: request.ip,
        ...extra,
        ...(error ? { err: error } : {}),
      },
      'request',
    );
  }
}
