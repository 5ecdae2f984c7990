import type { Http2Session } from 'node:http2';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { ERRORS } from '../errors/catalogue.js';
import { sendError } from '../errors/send-error.js';

/**
 * A stop that lets in-flight requests finish and lets nothing new start: once `close()` begins, requests
 * get 503 with Retry-After, every HTTP/1 response closes its connection (an idle keep-alive connection
 * would otherwise hold the server open), and HTTP/2 sessions get a GOAWAY (session.close() lets in-flight
 * streams finish and refuses new ones; without it they would hold the stop for the session time-out).
 */
export const gracefulClose = fp(
  async (app: FastifyInstance) => {
    let closing = false;
    const sessions = new Set<Http2Session>();
    app.server.on('session', (session: Http2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
    });
    app.addHook('preClose', async () => {
      closing = true;
      for (const session of sessions) session.close();
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
