import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ERROR_CODES, type ErrorCode } from '../schemas/error-codes.js';
import { StoreFullError, StoreUnavailableError } from '../store/store-errors.js';
import { ApiError } from './api-error.js';
import { ERRORS } from './catalogue.js';
import { sendError } from './send-error.js';
import { validationMessage } from './validation-message.js';

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  Object.entries(ERROR_CODES).map(([code, status]) => [status, code as ErrorCode]),
);

/** Turns what Fastify, its parsers and the store throw into the API's own errors; undefined for a fault. */
function toApiError(error: FastifyError & { validationContext?: string }): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreFullError) return ERRORS.storeFull.because(error);
  if (error instanceof StoreUnavailableError) return ERRORS.storeUnavailable.because(error);
  if (error.validation !== undefined && error.validation.length > 0) {
    const first = error.validation[0] as Parameters<typeof validationMessage>[1];
    return validationMessage(error.validationContext ?? 'request', first);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ERRORS.notJson.create();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ERRORS.bodyTooLarge.create();
  }
  const status = error.statusCode ?? 500;
  const code = status >= 400 && status < 500 ? CODE_BY_STATUS.get(status) : undefined;
  return code === undefined ? undefined : ERRORS.refusedByFramework(code, error.message).create();
}

/**
 * Whether a 503 is worth a warning: not when it continues a store failure already reported (a full disk
 * answers every write 503 until an operator frees space: one warning for that, not one per request).
 */
function reportUnavailable(error: Error): boolean {
  const storeError = error instanceof StoreUnavailableError ? error : error.cause;
  return storeError instanceof StoreUnavailableError ? storeError.shouldReport() : true;
}

/** Fastify's refusals before routing (a URL that does not decode): the Error body all the same. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const refusal =
    error.code === 'FST_ERR_BAD_URL' ? ERRORS.badUrl : ERRORS.refusedByFramework('invalid_request', error.message);
  sendError(reply, refusal.create());
}

/** Every error reply has the Error body: thrown errors, unknown routes, and faults (logged, never shown). */
export const errorHandler = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const apiError = toApiError(error);
      if (apiError === undefined) {
        request.log.error({ err: error }, 'unexpected error');
        return sendError(reply, ERRORS.internal.create(request.id));
      }
      if (apiError.statusCode === 503) {
        if (reportUnavailable(error)) request.log.warn({ err: error }, 'service unavailable');
      } else if (apiError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, apiError);
    });
    app.setNotFoundHandler((request, reply) => {
      const path = (request.url.split('?')[0] ?? '').slice(0, 200);
      return sendError(reply, ERRORS.noRoute.create(request.method, path));
    });
  },
  { name: 'error-handler' },
);
