import net from 'node:net';
import type { HostileRequest, HostileResponse } from './requests.js';
import { parseRawResponse } from './response-parser.js';

/**
 * One HTTP/1.1 request on its own connection, written as given; the answer is read until the server closes.
 * A request the parser may still be waiting on (an invalid one) is half-closed after a moment, so the
 * server sees the end of it; a valid one is not (Node aborts a request whose client half-closes).
 */
export function rawExchange(
  port: number,
  bytes: Buffer,
  protocolValid: boolean,
  timeoutMs = 10_000,
): Promise<HostileResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, timeoutMs);
    const halfClose = protocolValid ? undefined : setTimeout(() => socket.end(), 300);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      clearTimeout(halfClose);
      const response = parseRawResponse(Buffer.concat(chunks));
      resolve(
        timedOut && response.status === undefined ? { ...response, why: `no answer in ${timeoutMs} ms` } : response,
      );
    });
  });
}

/** The request as HTTP/1.1 bytes, with Host, Content-Length and Connection: close unless it says otherwise. */
export function rawBytes(request: HostileRequest): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`];
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
  if (request.noHost !== true) lines.push('Host: 127.0.0.1');
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (request.body !== undefined && !names.has('content-length') && !names.has('transfer-encoding')) {
    lines.push(`Content-Length: ${request.body.length}`);
  }
  if (request.noHost !== true) lines.push('Connection: close');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return request.body === undefined ? head : Buffer.concat([head, request.body]);
}
