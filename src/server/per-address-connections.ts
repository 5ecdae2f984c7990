import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** One warning a minute at most: a flood would otherwise log a line per refused connection. */
const WARN_INTERVAL_MS = 60_000;

/**
 * What connections are counted under: an IPv4 address (IPv4-mapped IPv6 included), or an IPv6 address's
 * /64, the block one site or host normally gets (counting single IPv6 addresses would let one host open
 * as many connections as it has addresses).
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!address.includes(':')) return address;
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  // A dotted IPv4 tail (64:ff9b::1.2.3.4) stands for two groups.
  const rightGroups = right.reduce((sum, group) => sum + (group.includes('.') ? 2 : 1), 0);
  const zeros = Array<string>(Math.max(0, 8 - left.length - rightGroups)).fill('0');
  const prefix = [...left, ...zeros, ...right].slice(0, 4);
  return `${prefix.map((group) => Number.parseInt(group, 16).toString(16)).join(':')}::/64`;
}

/**
 * Bounds the connections one client address holds open at once, so that one host cannot take every
 * connection of the process (`maxConnections`) and leave other clients with refused connections. A
 * connection beyond the bound is closed at once, unread, as Node closes one beyond `maxConnections`.
 * Counted on the server's `connection` event: TCP connections, before TLS, whatever protocol follows.
 */
export function capConnectionsPerAddress(app: FastifyInstance, cap: number): void {
  const open = new Map<string, number>();
  let warnedAt = Number.NEGATIVE_INFINITY;
  app.server.on('connection', (socket: Socket) => {
    // Undefined once the peer is already gone: nothing to count.
    if (socket.remoteAddress === undefined) return;
    const key = addressKey(socket.remoteAddress);
    const count = open.get(key) ?? 0;
    if (count >= cap) {
      socket.destroy();
      const now = Date.now();
      if (now - warnedAt >= WARN_INTERVAL_MS) {
        warnedAt = now;
        app.log.warn({ address: key, limit: cap }, 'connections refused: one client address holds its maximum');
      }
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
