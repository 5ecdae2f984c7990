import { connect, type Socket } from 'node:net';

export interface KeepAliveConnection {
  readonly socket: Socket;
  /** Writes one request and resolves with the whole response (head and body) as text; rejects if the server closes first. */
  exchange(request: string): Promise<string>;
  /** Resolves when the server closes the connection (or it fails), with when. */
  readonly closed: Promise<number>;
}

/**
 * One HTTP/1.1 connection kept open across requests, as a keep-alive client holds it: what fetch hides
 * (which connection a request goes on, and whether the server closed it first) is explicit here.
 */
export function openConnection(port: number, localAddress = '127.0.0.1'): Promise<KeepAliveConnection> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let received = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  let ended = false;
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    waiting?.();
  });
  const closed = new Promise<number>((resolve) => {
    socket.on('close', () => {
      ended = true;
      waiting?.();
      resolve(Date.now());
    });
    socket.on('error', () => undefined);
  });
  const exchange = (request: string) =>
    new Promise<string>((resolve, reject) => {
      received = Buffer.alloc(0);
      waiting = () => {
        const end = received.indexOf('\r\n\r\n');
        const head = end < 0 ? '' : received.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (end >= 0 && received.length >= end + 4 + length) {
          waiting = undefined;
          resolve(received.subarray(0, end + 4 + length).toString('utf8'));
        } else if (ended) {
          waiting = undefined;
          reject(new Error(`the server closed the connection; received ${JSON.stringify(received.toString())}`));
        }
      };
      if (ended) waiting();
      else socket.write(request);
    });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, exchange, closed }));
    socket.once('error', reject);
  });
}

/** The JSON body of a response `exchange` returned. */
export function bodyOf(response: string): any {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}
