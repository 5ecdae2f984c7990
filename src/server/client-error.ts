import type { Duplex } from 'node:stream';
import { ERRORS } from '../errors/catalogue.js';

/**
 * Node's `clientError`: malformed HTTP never reaches Fastify, so the Error body is written to the socket
 * here; a client too slow to send its request, or gone, is cut off without an answer.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.destroy();
    return;
  }
  const refusal = (error.code === 'HPE_HEADER_OVERFLOW' ? ERRORS.headersTooLarge : ERRORS.malformedHttp).create();
  const body = JSON.stringify({ code: refusal.code, message: refusal.message, status: refusal.statusCode });
  socket.end(
    'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
