import type { Http2Session } from 'node:http2';
import { Server, type Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { ERRORS } from '../errors/catalogue.js';
import { sendError } from '../errors/send-error.js';

/**
 * How long a stop keeps idle keep-alive connections open: a request already on its way on one gets 503 and
 * `Connection: close` instead of a closed socket (a client cannot tell whether a POST met by a closed socket
 * was done). A connection that carries nothing meanwhile is then closed; the stop ends sooner once none is left.
 */
const IDLE_DRAIN_MS = 1000;

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's stop: refuses new connections, drains the open ones (up to IDLE_DRAIN_MS), then closes. */
    stopGracefully(): Promise<void>;
  }
}

/**
 * A stop that lets in-flight requests finish and lets nothing new start: once it begins, requests get 503
 * with Retry-After, every HTTP/1 response closes its connection (an idle keep-alive connection would
 * otherwise hold the server open), and HTTP/2 sessions get a GOAWAY (session.close() lets in-flight
 * streams finish and refuses new ones; without it they would hold the stop for the session time-out).
 * `app.close()` alone does the same at once; `stopGracefully()` first gives idle connections their drain.
 */
export const gracefulClose = fp(
  async (app: FastifyInstance) => {
    let closing = false;
    const sessions = new Set<Http2Session>();
    app.server.on('session', (session: Http2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
    });
    let open = 0;
    let drained: (() => void) | undefined;
    app.server.on('connection', (socket: Socket) => {
      open++;
      socket.once('close', () => {
        open--;
        if (open === 0) drained?.();
      });
    });
    const beginClosing = () => {
      closing = true;
      for (const session of sessions) session.close();
    };
    app.addHook('preClose', async () => beginClosing());
    app.decorate('stopGracefully', async () => {
      beginClosing();
      // Stops listening but keeps the open connections: http.Server's close() would also close the idle
      // ones at once, and app.close() below calls it once they had their drain.
      Server.prototype.close.call(app.server);
      if (open > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_DRAIN_MS);
          drained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      await app.close();
    });
    // Callbacks, not async: these run on every request.
    app.addHook('onRequest', (_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      if (!closing) {
        done();
        return;
      }
      // Answered here; not calling done() ends the request's hooks.
      sendError(reply, ERRORS.shuttingDown.create());
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      if (closing && request.raw.httpVersionMajor === 1) reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'graceful-close' },
);
