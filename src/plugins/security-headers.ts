import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** One year: browsers and clients remember to use HTTPS only (RFC 6797). */
const HSTS = 'max-age=31536000';

/** Responses carry account data: never cache them; never let a client guess another content type. */
export const securityHeaders = fp(
  async (app: FastifyInstance, { https }: { https: boolean }) => {
    const headers: Record<string, string> = {
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...(https ? { 'strict-transport-security': HSTS } : {}),
    };
    // A callback, not async: an async hook costs a promise and a microtask per request.
    app.addHook('onSend', (_request, reply, payload, done) => {
      reply.headers(headers);
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);
