import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../schemas/error.js';
import { StoreUnavailableError } from '../store/store.js';
import { ApiError, ERROR_CODES, type ErrorCode } from './error-codes.js';
import { validationMessage } from './validation.js';

/** What a client is told to wait when the database is away: long enough for a restart or fail-over. */
const RETRY_AFTER_SECONDS = 5;

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  Object.entries(ERROR_CODES).map(([code, status]) => [status, code as ErrorCode]),
);

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  const body: ErrorBody = { code: error.code, message: error.message, status: error.statusCode };
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(body);
}

/** Turns what Fastify and its parsers throw into the API's own errors, so every reply has the Error body. */
function toApiError(error: FastifyError & { validationContext?: string }): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) {
    return new ApiError('service_unavailable', 'the database is unavailable; retry shortly', {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      cause: error,
    });
  }
  if (error.validation !== undefined && error.validation.length > 0) {
    const first = error.validation[0] as Parameters<typeof validationMessage>[1];
    return new ApiError('invalid_request', validationMessage(error.validationContext ?? 'request', first));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'the request body must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'the request body must not be larger than 64 KiB');
  }
  const status = error.statusCode ?? 500;
  const code = status >= 400 && status < 500 ? CODE_BY_STATUS.get(status) : undefined;
  return code === undefined ? undefined : new ApiError(code, error.message);
}

/** Registers the error and not-found handlers on the root instance. */
export function installErrorReplies(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError !== undefined) {
      if (apiError.statusCode === 503) request.log.warn({ err: error }, 'service unavailable');
      else if (apiError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, apiError);
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, new ApiError('internal_error', `internal error; quote request id ${request.id}`));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = (request.url.split('?')[0] ?? '').slice(0, 200);
    return sendError(reply, new ApiError('not_found', `no route for ${request.method} ${path}`));
  });
}
