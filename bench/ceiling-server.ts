/**
 * The ceiling: a bare node:http server answering every request with one fixed response, the service's own
 * list response. It runs as its own process (started by bench/ceiling.ts), as the service does, so it
 * gets a core of its own. Usage: node --import tsx bench/ceiling-server.ts RESPONSE.json
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CapturedResponse } from './http-capture.js';

/** Fastify's default, so that Node writes the same `Keep-Alive: timeout=72` header the service sends. */
const KEEP_ALIVE_MS = 72_000;

const file = process.argv[2];
if (file === undefined || process.send === undefined) throw new Error('started by bench/ceiling.ts only');
const captured = JSON.parse(readFileSync(file, 'utf8')) as CapturedResponse;
const headers = [...captured.headers];
const bytes = Buffer.from(captured.body, 'base64');

const server = createServer((request, response) => {
  request.resume();
  response.writeHead(captured.status, headers);
  response.end(bytes);
});
server.keepAliveTimeout = KEEP_ALIVE_MS;
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
// Never outlive the bench.
process.on('disconnect', () => process.exit());
