import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest, Http2Session } from 'node:http2';
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
/**
 * How long a stop lets requests in flight finish, from its start; then their connections are closed. Half
 * the process's 10 s bound (signals.ts), so the stop still ends, and says so, when a client stalls mid-body;
 * as long as the store's default query time-out and the lingering close, so neither is cut short.
 */
export const REQUEST_DRAIN_MS = 5000;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The process's stop: refuses new connections, drains the open ones (idle ones up to IDLE_DRAIN_MS, those
     * with requests in flight up to REQUEST_DRAIN_MS), then closes.
     */
    stopGracefully(): Promise<void>;
  }
}

/**
 * A stop that lets in-flight requests finish and lets nothing new start: once it begins, requests get 503
 * with Retry-After, every HTTP/1 response closes its connection (an idle keep-alive connection would
 * otherwise hold the server open), and HTTP/2 sessions get a GOAWAY (session.close() lets in-flight
 * streams finish and refuses new ones; without it they would hold the stop for the session time-out).
 * `app.close()` alone does the same at once; `stopGracefully()` first gives idle connections their drain,
 * and bounds the wait for requests in flight: a client that stalls mid-body would hold the close until its
 * 30 s request time-out, past the process's own bound.
 */
export const gracefulClose = fp(
  async (app: FastifyInstance) => {
    let closing = false;
    const sessions = new Set<Http2Session>();
    app.server.on('session', (session: Http2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
    });
    const sockets = new Set<Socket>();
    let drained: (() => void) | undefined;
    app.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => {
        sockets.delete(socket);
        if (sockets.size === 0) drained?.();
      });
    });
    // Requests not yet answered (or their answer not yet sent whole): what a stop that cuts would cut.
    const inFlight = new Set<IncomingMessage | Http2ServerRequest>();
    app.server.on('request', (request: IncomingMessage | Http2ServerRequest, response: NodeJS.EventEmitter) => {
      inFlight.add(request);
      response.once('close', () => inFlight.delete(request));
    });
    /** Closes every connection still open, saying how many requests that cut off. */
    const cutOff = () => {
      if (inFlight.size > 0) {
        app.log.warn({ requests: inFlight.size, afterMs: REQUEST_DRAIN_MS }, 'stop cut off requests still in flight');
      }
      for (const socket of sockets) socket.destroy();
    };
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
      const cut = setTimeout(cutOff, REQUEST_DRAIN_MS);
      if (sockets.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_DRAIN_MS);
          drained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      try {
        await app.close();
      } finally {
        clearTimeout(cut);
      }
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
