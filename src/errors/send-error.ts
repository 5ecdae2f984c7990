import type { FastifyReply } from 'fastify';
import type { ErrorBody } from '../schemas/error.js';
import type { ApiError } from './api-error.js';

/** Answers with the Error body and the error's own headers. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  const body: ErrorBody = { code: error.code, message: error.message, status: error.statusCode };
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(body);
}
