import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * How long, once an early answer is out, the rest of the request's body is read. The client only needs the
 * time to read the answer before the connection goes, with room for a loaded machine (nginx waits as long
 * between two reads). Far below the 30 s a client trickling a body may already hold a connection, so
 * lingering lets nobody hold one longer than sending slowly does.
 */
export const LINGERING_CLOSE_MS = 5000;

/**
 * How much of the rest of the body is read and discarded. Takes the usual mistakes that meet the 64 KiB
 * limit (an image or an export of a few MiB sent as a body) whole, so their senders finish and read the 413;
 * about what a 10 Mbit/s uplink sends within LINGERING_CLOSE_MS. Nothing read is kept: the bound is one of
 * bandwidth, not memory.
 */
export const LINGERING_CLOSE_BYTES = 4 * 1024 * 1024;

/** The bounds of one lingering close. */
export interface LingeringBounds {
  readonly ms: number;
  readonly bytes: number;
}

/** RFC 9112 §6.3: an HTTP/1.1 request has a body when it declares one. */
function declaresBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

/**
 * Reads and discards the rest of the body of a request answered before it arrived, within the bounds.
 * Node ends a connection after a `Connection: close` answer with `destroySoon()`: FIN, then a destroy once
 * the answer is flushed. With the body still arriving, the kernel answers its next bytes with a reset, and
 * a client still sending gets EPIPE or ECONNRESET, often before it has read the answer. Here that destroy
 * waits, the connection half-closed, until the body has arrived, the bytes bound is passed, or the time
 * bound ends after the answer. On a connection kept alive, Node would read the rest of the body without a
 * bound: the same bounds end a body that would not finish, and one that does leaves the connection open.
 */
function readRest(request: IncomingMessage, response: ServerResponse, bounds: LingeringBounds): void {
  const socket = request.socket;
  let left = bounds.bytes;
  let answered = false;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(timer);
    request.off('data', count);
    request.off('end', bodyDone);
    response.off('finish', onAnswered);
    socket.off('close', stop);
  };
  const close = () => {
    stop();
    socket.destroy();
  };
  const count = (chunk: Buffer) => {
    left -= chunk.length;
    if (left >= 0) return;
    // Past the bound before the answer is out: read no more, and close once it is.
    if (answered) close();
    else request.pause();
  };
  // Before the answer is out, Node closes (or keeps) the connection as it would have; after it, the
  // connection Node wanted closed is closed now.
  const bodyDone = () => (answered && socket.writableEnded ? close() : stop());
  const onAnswered = () => {
    answered = true;
    // destroySoon() has just ended the socket and left socket.destroy for its 'finish': not yet.
    if (socket.writableEnded) socket.off('finish', socket.destroy);
    if (left < 0) close();
    else timer = setTimeout(close, bounds.ms);
  };
  request.on('data', count);
  request.once('end', bodyDone);
  response.once('finish', onAnswered);
  socket.once('close', stop);
}

/**
 * Lingering close (RFC 9112 §9.6) for answers sent before the request's body has arrived: a 413 on the
 * declared length, a 401 before an upload, a 503 while stopping. HTTP/1 only: HTTP/2 ends the stream, not
 * the connection. A request whose body has arrived is answered and closed as before.
 */
export const lingeringClose = fp(
  async (app: FastifyInstance, bounds: LingeringBounds) => {
    // A callback, not async: this runs on every request.
    app.addHook('onSend', (request, reply, payload, done) => {
      const raw = request.raw;
      if (raw.httpVersionMajor === 1 && !raw.complete && declaresBody(raw)) readRest(raw, reply.raw, bounds);
      done(null, payload);
    });
  },
  { name: 'lingering-close' },
);
