import type { FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { Clock } from '../clock.js';
import { ERRORS } from '../errors/catalogue.js';

export interface Deprecation {
  /** When the operation became deprecated (RFC 9745 `Deprecation`). */
  readonly deprecatedAt: Date;
  /** When it stops working (RFC 8594 `Sunset`); from this instant it answers 410. */
  readonly sunsetAt: Date;
  /** Link to the operation that replaces it. */
  readonly successor: string;
  /** Link to the human-readable notice. */
  readonly notice: string;
}

/**
 * Route hooks that put `Deprecation`, `Sunset` and `Link` on every response of the route,
 * errors included, and answer 410 `gone` once the sunset instant has passed.
 */
export function deprecationHooks(
  deprecation: Deprecation,
  clock: Clock,
): Pick<RouteShorthandOptions, 'onRequest' | 'onSend'> {
  const headers = {
    deprecation: `@${Math.floor(deprecation.deprecatedAt.getTime() / 1000)}`,
    sunset: deprecation.sunsetAt.toUTCString(),
    link: `<${deprecation.successor}>; rel="successor-version", <${deprecation.notice}>; rel="deprecation"`,
  };
  const removedOn = deprecation.sunsetAt.toISOString().slice(0, 10);
  return {
    onRequest: async (request: FastifyRequest) => {
      if (clock() >= deprecation.sunsetAt) {
        throw ERRORS.removed.create(`${request.method} ${request.routeOptions.url}`, removedOn, deprecation.successor);
      }
    },
    onSend: async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      reply.headers(headers);
      return payload;
    },
  };
}
