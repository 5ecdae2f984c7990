import { createServer, type Server } from 'node:net';

function listening(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
}

/** Two distinct ports free on 127.0.0.1 now: the kernel's choice, released at once for services to take. */
export async function twoFreePorts(): Promise<readonly [number, number]> {
  const servers = [createServer(), createServer()] as const;
  try {
    return [await listening(servers[0]), await listening(servers[1])];
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
